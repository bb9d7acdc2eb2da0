// Maintained by scripts/generate-migration.sh: every migration of this dialect, in order.
import { Foundation1795260123389 } from './1795260123389-Foundation';
import { RequestLogs1795260712107 } from './1795260712107-RequestLogs';

export const postgresMigrations: Function[] = [
  Foundation1795260123389,
  RequestLogs1795260712107,
];
