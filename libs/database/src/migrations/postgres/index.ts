// Maintained by scripts/generate-migration.sh: every migration of this dialect, in order.
import { Foundation1795260123389 } from './1795260123389-Foundation';
import { RequestLogs1795260712107 } from './1795260712107-RequestLogs';
import { Configs1795262966312 } from './1795262966312-Configs';
import { Integrations1795263096910 } from './1795263096910-Integrations';
import { Policies1795264004498 } from './1795264004498-Policies';

export const postgresMigrations: Function[] = [
  Foundation1795260123389,
  RequestLogs1795260712107,
  Configs1795262966312,
  Integrations1795263096910,
  Policies1795264004498,
];
