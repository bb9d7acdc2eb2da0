import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource, EntitySchema } from 'typeorm';
import { sqliteModule } from './sqlite-module';
import { gateSqliteTransactions } from './sqlite-transaction-gate';

interface Note {
  id: number;
  text: string;
}

const NoteSchema = new EntitySchema<Note>({
  name: 'note',
  columns: { id: { type: Number, primary: true }, text: { type: String } },
});

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('gateSqliteTransactions', () => {
  let dir: string;
  let dataSource: DataSource;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sb-gate-'));
    dataSource = await new DataSource({
      type: 'better-sqlite3',
      driver: sqliteModule(),
      database: join(dir, 'gate.db'),
      entities: [NoteSchema],
      synchronize: true,
    }).initialize();
    gateSqliteTransactions(dataSource);
  });

  afterEach(async () => {
    await dataSource.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  const texts = async () =>
    (await dataSource.getRepository(NoteSchema).find({ order: { id: 'ASC' } })).map((n) => n.text);

  it('runs concurrent transactions one after the other, so a rollback undoes only its own writes', async () => {
    let firstMayFail!: () => void;
    const failing = dataSource.transaction(async (manager) => {
      await manager.insert(NoteSchema, { id: 1, text: 'rolled back' });
      await new Promise<void>((resolve) => (firstMayFail = resolve));
      throw new Error('boom');
    });
    await tick();
    const committed = dataSource.transaction(async (manager) => {
      await manager.insert(NoteSchema, { id: 2, text: 'kept' });
    });
    await tick();
    firstMayFail();
    await expect(failing).rejects.toThrow('boom');
    await committed;
    expect(await texts()).toEqual(['kept']);
  });

  it('keeps a plain write made while another transaction is open out of that transaction', async () => {
    let release!: () => void;
    const failing = dataSource.transaction(async (manager) => {
      await manager.insert(NoteSchema, { id: 1, text: 'rolled back' });
      await new Promise<void>((resolve) => (release = resolve));
      throw new Error('boom');
    });
    await tick();
    const plain = dataSource.getRepository(NoteSchema).insert({ id: 3, text: 'plain' });
    await tick();
    release();
    await expect(failing).rejects.toThrow('boom');
    await plain;
    expect(await texts()).toEqual(['plain']);
  });

  it('still keeps plain writes out of a transaction begun after the gate was idle', async () => {
    await dataSource.transaction((manager) => manager.insert(NoteSchema, { id: 10, text: 'first' }));
    // The gate is idle now (its token store disabled); the next transaction must enable it again.
    let release!: () => void;
    const failing = dataSource.transaction(async (manager) => {
      await manager.insert(NoteSchema, { id: 11, text: 'rolled back' });
      await new Promise<void>((resolve) => (release = resolve));
      throw new Error('boom');
    });
    await tick();
    const plain = dataSource.getRepository(NoteSchema).insert({ id: 12, text: 'plain' });
    await tick();
    release();
    await expect(failing).rejects.toThrow('boom');
    await plain;
    expect(await texts()).toEqual(['first', 'plain']);
  });

  it('lets a transaction opened inside a running one nest in it', async () => {
    await dataSource.transaction(async (manager) => {
      await manager.insert(NoteSchema, { id: 1, text: 'outer' });
      await dataSource.transaction(async (inner) => inner.insert(NoteSchema, { id: 2, text: 'inner' }));
    });
    expect(await texts()).toEqual(['outer', 'inner']);
  });

  it('refuses a transaction TypeORM would open on its own outside the gate, naming the fix', async () => {
    await expect(dataSource.getRepository(NoteSchema).save({ id: 4, text: 'implicit' })).rejects.toThrow(
      /dataSource\.transaction\(\).*transaction: false/,
    );
    await dataSource.getRepository(NoteSchema).save({ id: 4, text: 'explicit' }, { transaction: false });
    expect(await texts()).toEqual(['explicit']);
  });

  it('fails a query that waits too long for a transaction which awaits it, so the deadlock unwinds', async () => {
    await dataSource.destroy();
    dataSource = await new DataSource({
      type: 'better-sqlite3',
      driver: sqliteModule(),
      database: join(dir, 'deadlock.db'),
      entities: [NoteSchema],
      synchronize: true,
    }).initialize();
    gateSqliteTransactions(dataSource, { waitTimeoutMs: 50 });
    let outside!: Promise<unknown>;
    const started = new Promise<void>((resolve) => {
      // A query started by another flow before the transaction, and awaited inside it.
      setImmediate(() => {
        outside = dataSource.getRepository(NoteSchema).insert({ id: 6, text: 'outside' });
        resolve();
      });
    });
    const deadlocked = dataSource.transaction(async (manager) => {
      await manager.insert(NoteSchema, { id: 7, text: 'inside' });
      await started;
      await outside;
    });
    await expect(deadlocked).rejects.toThrow(/waited 50 ms for another transaction/);
    await dataSource.transaction((manager) => manager.insert(NoteSchema, { id: 8, text: 'after' }));
    expect(await texts()).toEqual(['after']);
  });

  it('goes on after a transaction fails to begin', async () => {
    await expect(
      dataSource.transaction(async () => {
        throw new Error('early');
      }),
    ).rejects.toThrow('early');
    await dataSource.transaction((manager) => manager.insert(NoteSchema, { id: 5, text: 'after' }));
    expect(await texts()).toEqual(['after']);
  });
});
