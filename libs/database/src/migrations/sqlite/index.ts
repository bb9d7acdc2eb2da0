// Maintained by scripts/generate-migration.sh: every migration of this dialect, in order.
import { Foundation1795260121041 } from './1795260121041-Foundation';
import { RequestLogs1795260709616 } from './1795260709616-RequestLogs';
import { Configs1795262960897 } from './1795262960897-Configs';
import { Integrations1795263091869 } from './1795263091869-Integrations';
import { Policies1795264000689 } from './1795264000689-Policies';

export const sqliteMigrations: Function[] = [
  Foundation1795260121041,
  RequestLogs1795260709616,
  Configs1795262960897,
  Integrations1795263091869,
  Policies1795264000689,
];
