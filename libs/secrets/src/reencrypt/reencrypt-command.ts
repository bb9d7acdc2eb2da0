import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadConfig } from '@switchboard/config';
import { buildDataSourceOptions } from '@switchboard/database';
import { SecretCipher } from '../secret-cipher';
import {
  ReencryptReport,
  currentMasterKey,
  formatReencryptReport,
  reencryptSecrets,
} from './reencrypt-secrets';

const USAGE = `Usage: npm run secrets:reencrypt -- [--dry-run] [--skip-table <name>]...

Re-encrypts every stored secret under GATEWAY_ENCRYPTION_KEY. Values sealed with a former key
are opened with the keys in GATEWAY_ENCRYPTION_KEYS_PREVIOUS (comma-separated). Uses DATABASE_URL
like the server. Safe to run again: values already under the current key are left alone.`;

export interface ReencryptCommandIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

/** The command line: parses arguments, connects like the server, runs, prints. Answers the exit code. */
export async function runReencryptCommand(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  io: ReencryptCommandIo = {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  },
): Promise<{ code: number; report?: ReencryptReport }> {
  let dryRun = false;
  const skipTables: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--dry-run') dryRun = true;
    else if (arg === '--skip-table' && argv[i + 1]) skipTables.push(argv[++i]);
    else if (arg === '--help' || arg === '-h') {
      io.out(USAGE);
      return { code: 0 };
    } else {
      io.err(`Unknown argument '${arg}'.\n${USAGE}`);
      return { code: 2 };
    }
  }
  let dataSource: DataSource | null = null;
  try {
    const config = loadConfig(env);
    const cipher = new SecretCipher(currentMasterKey(config), config.previousEncryptionKeys);
    if (config.previousEncryptionKeys.length === 0) {
      io.err(
        'Note: GATEWAY_ENCRYPTION_KEYS_PREVIOUS is empty; values sealed with another key cannot be opened.',
      );
    }
    dataSource = await new DataSource(buildDataSourceOptions(config.database)).initialize();
    const report = await reencryptSecrets(dataSource, config.database, cipher, { dryRun, skipTables });
    for (const line of formatReencryptReport(report)) io.out(line);
    return { code: report.failures.length > 0 ? 1 : 0, report };
  } catch (error) {
    io.err(`Re-encryption failed: ${(error as Error).message}`);
    return { code: 1 };
  } finally {
    if (dataSource?.isInitialized) await dataSource.destroy();
  }
}

if (require.main === module) {
  void runReencryptCommand(process.argv.slice(2)).then(({ code }) => {
    process.exitCode = code;
  });
}
