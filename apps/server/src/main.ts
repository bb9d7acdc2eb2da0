import 'reflect-metadata';
import { ConfigValidationError, loadConfig } from '@switchboard/config';
import { createApp } from './create-app';
import { applyRuntimeFixes } from './runtime-fixes';

applyRuntimeFixes();

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigValidationError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const app = await createApp(config);
  await app.listen({ port: config.port, host: config.host });
  const address = `http://${config.host}:${config.port}/v1`;
  process.stdout.write(`Switchboard listening on ${address}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
