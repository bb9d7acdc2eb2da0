/**
 * Re-encrypts every stored secret under the current master key after a rotation.
 *
 *   GATEWAY_ENCRYPTION_KEY=<new> GATEWAY_ENCRYPTION_KEYS_PREVIOUS=<old> npm run secrets:reencrypt [-- --dry-run]
 *
 * The work is in libs/secrets/src/reencrypt (compiled into dist with the server, so a deployment
 * without dev dependencies runs dist/libs/secrets/src/reencrypt/reencrypt-command.js directly).
 */
import { runReencryptCommand } from '../libs/secrets/src/reencrypt/reencrypt-command';

void runReencryptCommand(process.argv.slice(2)).then(({ code }) => {
  process.exitCode = code;
});
