import { createRequire } from 'node:module';
import type Redis from 'ioredis';
import type { Transporter, createTransport } from 'nodemailer';

const load = createRequire(__filename);

/**
 * ioredis, loaded the first time a Redis URL is used rather than when the app starts: a gateway
 * without Redis never holds its code (1.6 MB of heap, and through V8's heap-growing factor more
 * than that in RSS under load). Where Redis is configured, the services that use it load it at
 * start, so no request pays for the load.
 */
export function redisClient(): typeof Redis {
  const loaded = load('ioredis') as typeof Redis & { default?: typeof Redis };
  return loaded.default ?? loaded;
}

/**
 * An SMTP transport from nodemailer, loaded only when SMTP is configured: without it the process
 * never holds its code (2.2 MB of heap).
 */
export function smtpTransport(...args: Parameters<typeof createTransport>): Transporter {
  const nodemailer = load('nodemailer') as { createTransport: typeof createTransport };
  return nodemailer.createTransport(...args);
}
