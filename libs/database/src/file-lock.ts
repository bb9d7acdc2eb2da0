import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** A lock held for longer than this is taken to belong to a process that died. */
const STALE_AFTER_MS = 10 * 60 * 1000;

function tryAcquire(path: string): boolean {
  try {
    const fd = openSync(path, 'wx');
    writeFileSync(fd, `${process.pid}`);
    closeSync(fd);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    try {
      const age = Date.now() - statSync(path).mtimeMs;
      const owner = Number(readFileSync(path, 'utf8'));
      if (age > STALE_AFTER_MS || (owner > 0 && !processAlive(owner))) unlinkSync(path);
    } catch {
      // The holder released it between our checks; the next attempt decides.
    }
    return false;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function release(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone: nothing to release.
  }
}

/** Runs `fn` holding an exclusive lock file, waiting for it up to `waitMs`. */
export async function withFileLock<T>(path: string, fn: () => Promise<T>, waitMs = 60_000): Promise<T> {
  const deadline = Date.now() + waitMs;
  while (!tryAcquire(path)) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for lock ${path}`);
    await sleep(50);
  }
  try {
    return await fn();
  } finally {
    release(path);
  }
}

/** Runs `fn` only if the lock is free now; answers undefined when another process holds it. */
export async function tryWithFileLock<T>(path: string, fn: () => Promise<T>): Promise<T | undefined> {
  if (!tryAcquire(path)) return undefined;
  try {
    return await fn();
  } finally {
    release(path);
  }
}
