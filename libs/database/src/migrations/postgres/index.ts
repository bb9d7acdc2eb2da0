// Maintained by scripts/generate-migration.sh: every migration of this dialect, in order.
import { Foundation1795260123389 } from './1795260123389-Foundation';

export const postgresMigrations: Function[] = [Foundation1795260123389];
