import { createReadStream } from 'node:fs';
import { appendFile, mkdir, readdir, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { LogRecord } from './log-record';

/**
 * `logs-<pid>-<tag>.jsonl` while its writer appends, `….closed` once that writer shut down (free
 * for anyone to replay), `….replay-<pid>` once claimed for replay.
 */
const SPILL_FILE = /^logs-(\d+)-[A-Za-z0-9]+\.jsonl(?:\.(closed)|\.replay-(\d+))?$/;

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A spilled line back into a record; dates travel as ISO strings. Null for a torn or foreign line. */
export function parseSpilledLine(line: string): LogRecord | null {
  if (line.trim() === '') return null;
  try {
    const value = JSON.parse(line) as LogRecord & { createdAt: string };
    if (typeof value.id !== 'string' || typeof value.organisationId !== 'string') return null;
    const createdAt = new Date(value.createdAt);
    if (Number.isNaN(createdAt.getTime())) return null;
    return { ...value, createdAt };
  } catch {
    return null;
  }
}

/**
 * Append-only JSONL files that hold log records while the database cannot take them. Each process
 * appends to a file of its own (so replicas sharing a data folder never interleave lines), and
 * claims a file for replay by renaming it, which is atomic: new spills then go to a fresh file,
 * and two processes never replay the same file. Files of processes that died (a crash before the
 * shutdown flush) are claimed by whichever process looks next.
 */
export class LogSpill {
  private readonly tag = randomBytes(6).toString('hex');
  private active: string;
  /** Appends and claims run one after another, so a claim never races an append to the same file. */
  private chain: Promise<unknown> = Promise.resolve();
  private spilledSinceClaim = false;
  private rotations = 0;

  constructor(readonly directory: string) {
    this.active = this.newActivePath();
  }

  /** Appends records; resolves once they are on disk (in the OS's hands). */
  append(records: readonly LogRecord[]): Promise<void> {
    const text = records.map((record) => JSON.stringify(record)).join('\n') + '\n';
    const step = this.chain.then(async () => {
      await mkdir(this.directory, { recursive: true });
      await appendFile(this.active, text, 'utf8');
      this.spilledSinceClaim = true;
    });
    this.chain = step.catch(() => undefined);
    return step;
  }

  /** Records the database refused one by one: kept for an operator, never replayed. */
  async reject(record: LogRecord, reason: string): Promise<void> {
    await mkdir(this.directory, { recursive: true });
    await appendFile(
      join(this.directory, `rejected-${process.pid}-${this.tag}.jsonl`),
      JSON.stringify({ reason, record }) + '\n',
      'utf8',
    );
  }

  /** True when this process has spilled since its last claim (cheap: no disk access). */
  get hasOwnSpill(): boolean {
    return this.spilledSinceClaim;
  }

  /**
   * Takes every file that is ready to replay: this process's active file (rotated to a new one),
   * its own earlier claims, and the files of dead processes. Answers the claimed paths, oldest first.
   */
  claim(): Promise<string[]> {
    const step = this.chain.then(async () => {
      let names: string[];
      try {
        names = await readdir(this.directory);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw error;
      }
      const claimed: string[] = [];
      const mine = `.replay-${process.pid}`;
      const activeName = this.active.slice(this.directory.length + 1);
      for (const name of names.sort()) {
        const match = SPILL_FILE.exec(name);
        if (!match) continue;
        const claimedBy = match[3] ? Number(match[3]) : null;
        const path = join(this.directory, name);
        if (name === activeName) {
          this.active = this.newActivePath();
          this.spilledSinceClaim = false;
        } else if (claimedBy === process.pid) {
          claimed.push(path);
          continue;
        } else if (claimedBy !== null) {
          if (processAlive(claimedBy)) continue;
        } else if (!match[2]) {
          // Still being appended to by another writer, unless its process died.
          const owner = Number(match[1]);
          if (owner === process.pid || processAlive(owner)) continue;
        }
        const base = name.replace(/\.(closed|replay-\d+)$/, '');
        const target = join(this.directory, `${base}${mine}`);
        try {
          await rename(path, target);
          claimed.push(target);
        } catch (error) {
          // Another process claimed it first.
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        }
      }
      return claimed;
    });
    this.chain = step.catch(() => undefined);
    return step;
  }

  /** At shutdown: hands this writer's file to whichever process replays next. */
  close(): Promise<void> {
    const step = this.chain.then(async () => {
      if (!this.spilledSinceClaim) return;
      await rename(this.active, `${this.active}.closed`).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      });
      this.spilledSinceClaim = false;
      this.active = this.newActivePath();
    });
    this.chain = step.catch(() => undefined);
    return step;
  }

  /** Reads a claimed file in batches without holding it whole in memory. */
  async *read(path: string, batchSize: number): AsyncGenerator<{ records: LogRecord[]; torn: number }> {
    const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
    let records: LogRecord[] = [];
    let torn = 0;
    for await (const line of lines) {
      const record = parseSpilledLine(line);
      if (record) records.push(record);
      else if (line.trim() !== '') torn += 1;
      if (records.length >= batchSize) {
        yield { records, torn };
        records = [];
        torn = 0;
      }
    }
    if (records.length > 0 || torn > 0) yield { records, torn };
  }

  async remove(path: string): Promise<void> {
    await unlink(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }

  private newActivePath(): string {
    this.rotations += 1;
    return join(this.directory, `logs-${process.pid}-${this.tag}${this.rotations.toString(36)}.jsonl`);
  }
}
