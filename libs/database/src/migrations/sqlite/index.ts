// Maintained by scripts/generate-migration.sh: every migration of this dialect, in order.
import { Foundation1795260121041 } from './1795260121041-Foundation';

export const sqliteMigrations: Function[] = [Foundation1795260121041];
