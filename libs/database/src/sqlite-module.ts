import type BetterSqlite3 from 'better-sqlite3';
import { createRequire } from 'node:module';

/**
 * Which better-sqlite3 this Node loads.
 *
 * better-sqlite3 12, the last major that runs on Node 20, wraps its objects in node::ObjectWrap.
 * From Node 24.19 that class's destructor insists on an entered context, so a Statement collected
 * by an idle garbage collection aborts the process (SIGABRT in RemoveEnvironmentCleanupHook; seen
 * here on 24.21 within seconds of steady writes). better-sqlite3 13 is a Node-API addon that ships
 * its binaries prebuilt and does not have that destructor, but it needs Node 22 (on Node 20 it
 * crashes at the first query).
 *
 * So both are installed: 12 as `better-sqlite3`, 13 under the alias `better-sqlite3-napi`. Node 22
 * and later load 13; Node 20 loads 12. Should 13 fail to load (a platform without its prebuilt
 * binary), 12 is used, built from source at install time as before.
 */
export type SqliteModule = typeof BetterSqlite3;

export const SQLITE_NAPI_MODULE = 'better-sqlite3-napi';
export const SQLITE_LEGACY_MODULE = 'better-sqlite3';

let chosen: { name: string; module: SqliteModule } | undefined;
const load = createRequire(__filename);

export function nodeMajor(version = process.versions.node): number {
  return Number.parseInt(version.split('.')[0], 10);
}

/** The module name for this Node, so a worker thread can load the same one. */
export function sqliteModuleName(): string {
  return loadSqlite().name;
}

/** The better-sqlite3 constructor for this Node (see above). */
export function sqliteModule(): SqliteModule {
  return loadSqlite().module;
}

function loadSqlite(): { name: string; module: SqliteModule } {
  if (chosen) return chosen;
  if (nodeMajor() >= 22) {
    try {
      chosen = { name: SQLITE_NAPI_MODULE, module: load(SQLITE_NAPI_MODULE) as SqliteModule };
      return chosen;
    } catch {
      // No prebuilt binary for this platform: fall back to the one built at install time.
    }
  }
  chosen = { name: SQLITE_LEGACY_MODULE, module: load(SQLITE_LEGACY_MODULE) as SqliteModule };
  return chosen;
}
