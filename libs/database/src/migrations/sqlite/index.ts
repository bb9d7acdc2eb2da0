// Maintained by scripts/generate-migration.sh: every migration of this dialect, in order.
import { Foundation1795260121041 } from './1795260121041-Foundation';
import { RequestLogs1795260709616 } from './1795260709616-RequestLogs';

export const sqliteMigrations: Function[] = [
  Foundation1795260121041,
  RequestLogs1795260709616,
];
