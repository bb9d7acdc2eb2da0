import { AsyncLocalStorage } from 'node:async_hooks';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';

/**
 * How long a query waits for another flow's transaction before it fails. Transactions here last
 * milliseconds; a wait this long means a transaction is waiting, in turn, on a query that waits for
 * it (see CONTRIBUTING.md), and failing that query is what lets the transaction roll back.
 */
const DEFAULT_WAIT_TIMEOUT_MS = 30_000;

function waitFor(done: Promise<void>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `SQLite: a query waited ${timeoutMs} ms for another transaction to end; ` +
              'a transaction may be awaiting work that waits for it',
          ),
        ),
      timeoutMs,
    );
  });
  return Promise.race([done, timeout]).finally(() => clearTimeout(timer));
}

type TransactionFn = (...args: unknown[]) => Promise<unknown>;
type QueryFn = (sql: string, parameters?: unknown[], structured?: boolean) => Promise<unknown>;

/**
 * TypeORM's better-sqlite3 driver runs every query runner over one shared connection. Left alone,
 * two requests' transactions interleave on it (the second silently becomes a savepoint of the
 * first, and a rollback of either undoes the other), and a plain write made meanwhile joins
 * whichever transaction happens to be open.
 *
 * The gate makes SQLite transactions take turns: `dataSource.transaction()` waits for the one
 * before it, and runs its callback under a token that follows its async calls. A query from
 * anywhere else waits while a transaction is open, so it neither joins nor sees it. Transactions
 * begin IMMEDIATE: they take the write lock at once (waiting up to busy_timeout for the log
 * writer's own connection) instead of failing with SQLITE_BUSY when a read turns into a write
 * after another connection has committed.
 *
 * Installed after migrations, which run alone. PostgreSQL needs none of this: each transaction
 * has a pooled connection of its own.
 */
export function gateSqliteTransactions(
  dataSource: DataSource,
  options: { waitTimeoutMs?: number } = {},
): void {
  if (dataSource.options.type !== 'better-sqlite3') return;
  const waitTimeoutMs = options.waitTimeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
  const owner = new AsyncLocalStorage<symbol>();
  let held: { token: symbol; done: Promise<void> } | undefined;
  let queue: Promise<void> = Promise.resolve();
  // Transactions begun and not yet ended. When none is, the token store is disabled: before Node 24
  // an enabled AsyncLocalStorage runs async hooks for every promise in the process, which cost the
  // data plane (no transactions there) 10-15% of its CPU. `run` enables it again.
  let open = 0;

  const manager: EntityManager = dataSource.manager;
  const transaction = manager.transaction.bind(manager) as TransactionFn;
  const gated: TransactionFn = (...args) => {
    // A transaction opened inside one that is running nests in it (a savepoint), as TypeORM does.
    if (held && owner.getStore() === held.token) return transaction(...args);
    const token = Symbol('sqlite-transaction');
    open += 1;
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const previous = queue;
    queue = done;
    return previous
      .then(() => {
        held = { token, done };
        return owner.run(token, () => transaction(...args));
      })
      .finally(() => {
        held = undefined;
        open -= 1;
        if (open === 0) owner.disable();
        finish();
      });
  };
  manager.transaction = gated as EntityManager['transaction'];

  // The driver answers every createQueryRunner() with this one runner.
  const runner: QueryRunner = dataSource.createQueryRunner();
  const query = runner.query.bind(runner) as QueryFn;
  const startTransaction = runner.startTransaction.bind(runner);
  runner.query = (async (sql: string, parameters?: unknown[], structured?: boolean) => {
    while (held && owner.getStore() !== held.token) await waitFor(held.done, waitTimeoutMs);
    return query(sql === 'BEGIN TRANSACTION' ? 'BEGIN IMMEDIATE TRANSACTION' : sql, parameters, structured);
  }) as QueryRunner['query'];
  runner.startTransaction = (isolationLevel) => {
    if (!held || owner.getStore() !== held.token)
      return Promise.reject(
        new Error(
          'SQLite transactions must start through dataSource.transaction(); ' +
            'pass { transaction: false } to a save() made outside one',
        ),
      );
    return startTransaction(isolationLevel);
  };
}
