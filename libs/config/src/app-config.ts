import { isIP } from 'node:net';
import { PoliciesSettings, loadPoliciesSettings } from './policies-settings';

/** The operational contract of DESIGN.md, validated once at start. */
export interface AppConfig {
  port: number;
  host: string;
  database: { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };
  redisUrl: string | null;
  adminKey: string | null;
  encryptionKey: string | null;
  /** Former master keys, still accepted for decryption until `npm run secrets:reencrypt` has run. */
  previousEncryptionKeys: string[];
  jobsEnabled: boolean;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Public base URL (without /v1) used in links we hand out, e.g. invite links. */
  publicUrl: string | null;
  /** Folder for the generated encryption key, spill files and the SQLite database by default. */
  dataDir: string;
  /** How long a rotated key's previous value stays valid. */
  keyRotationTransitionMs: number;
  /** How long an invite link stays valid. */
  inviteTtlMs: number;
  /** Request and response bodies are kept in logs up to this many characters each; 0 keeps none. */
  logBodyMaxBytes: number;
  /** Counters, usage flushing and alert mail of the policies area (policies-settings.ts). */
  policies: PoliciesSettings;
}

export class ConfigValidationError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** Raw keys we generate look like `sb-` + 43 base64url characters; an operator-chosen one must be as hard to guess. */
const MIN_ADMIN_KEY_LENGTH = 32;

function parseInteger(
  name: string,
  raw: string | undefined,
  fallback: number,
  min: number,
  max: number,
  problems: string[],
) {
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) {
    problems.push(`${name} must be an integer between ${min} and ${max} (got "${raw}")`);
    return fallback;
  }
  const value = Number(raw);
  if (value < min || value > max) problems.push(`${name} must be between ${min} and ${max} (got ${value})`);
  return value;
}

function parseBoolean(name: string, raw: string | undefined, fallback: boolean, problems: string[]) {
  if (raw === undefined || raw === '') return fallback;
  const normalised = raw.toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(normalised)) return true;
  if (['false', '0', 'no', 'off'].includes(normalised)) return false;
  problems.push(`${name} must be a boolean: true or false (got "${raw}")`);
  return fallback;
}

/** Reads every setting, collects every problem, and throws them all at once. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const problems: string[] = [];
  const port = parseInteger('PORT', env.PORT, 8787, 0, 65535, problems);

  const host = env.HOST ?? '127.0.0.1';
  if (host !== 'localhost' && isIP(host) === 0 && !/^[a-zA-Z0-9.-]+$/.test(host)) {
    problems.push(`HOST must be an IP address or a host name (got "${host}")`);
  }

  const dataDir = env.GATEWAY_DATA_DIR ?? './data';
  const databaseUrl = env.DATABASE_URL ?? `sqlite:${dataDir}/gateway.db`;
  let database: AppConfig['database'] = { kind: 'sqlite', path: `${dataDir}/gateway.db` };
  if (databaseUrl.startsWith('sqlite:')) {
    const path = databaseUrl.slice('sqlite:'.length);
    if (path === '') problems.push('DATABASE_URL sqlite: needs a file path, e.g. sqlite:./data/gateway.db');
    database = { kind: 'sqlite', path };
  } else if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    try {
      new URL(databaseUrl);
      database = { kind: 'postgres', url: databaseUrl };
    } catch {
      problems.push('DATABASE_URL is not a valid postgres:// URL');
    }
  } else {
    problems.push(
      `DATABASE_URL must start with sqlite: or postgres:// (got "${databaseUrl.split(':')[0]}:…")`,
    );
  }

  const redisUrl = env.REDIS_URL || null;
  if (redisUrl !== null && !/^rediss?:\/\//.test(redisUrl)) {
    problems.push('REDIS_URL must start with redis:// or rediss://');
  }

  const adminKey = env.GATEWAY_ADMIN_KEY || null;
  if (adminKey !== null && (adminKey.length < MIN_ADMIN_KEY_LENGTH || /\s/.test(adminKey))) {
    problems.push(`GATEWAY_ADMIN_KEY must be at least ${MIN_ADMIN_KEY_LENGTH} characters with no spaces`);
  }

  const encryptionKey = env.GATEWAY_ENCRYPTION_KEY || null;
  if (encryptionKey !== null && !isMasterKey(encryptionKey)) {
    problems.push('GATEWAY_ENCRYPTION_KEY must be 32 bytes, as 64 hex characters or base64');
  }
  const previousEncryptionKeys = (env.GATEWAY_ENCRYPTION_KEYS_PREVIOUS ?? '')
    .split(',')
    .map((value) => value.trim())
    .filter((value) => value.length > 0);
  if (previousEncryptionKeys.some((value) => !isMasterKey(value))) {
    problems.push(
      'GATEWAY_ENCRYPTION_KEYS_PREVIOUS must be a comma-separated list of 32-byte keys (hex or base64)',
    );
  }

  const publicUrl = env.GATEWAY_PUBLIC_URL ? env.GATEWAY_PUBLIC_URL.replace(/\/+$/, '') : null;
  if (publicUrl !== null && !/^https?:\/\/[^\s]+$/.test(publicUrl)) {
    problems.push('GATEWAY_PUBLIC_URL must be an http(s) URL');
  }

  const jobsEnabled = parseBoolean('GATEWAY_JOBS', env.GATEWAY_JOBS, true, problems);

  const logLevel = (env.LOG_LEVEL ?? 'info') as AppConfig['logLevel'];
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);

  const keyRotationTransitionMs = parseInteger(
    'GATEWAY_KEY_ROTATION_TRANSITION_MS',
    env.GATEWAY_KEY_ROTATION_TRANSITION_MS,
    24 * 60 * 60 * 1000,
    0,
    90 * 24 * 60 * 60 * 1000,
    problems,
  );
  const inviteTtlMs = parseInteger(
    'GATEWAY_INVITE_TTL_MS',
    env.GATEWAY_INVITE_TTL_MS,
    7 * 24 * 60 * 60 * 1000,
    60_000,
    90 * 24 * 60 * 60 * 1000,
    problems,
  );

  const logBodyMaxBytes = parseInteger(
    'GATEWAY_LOG_BODY_MAX_BYTES',
    env.GATEWAY_LOG_BODY_MAX_BYTES,
    16 * 1024,
    0,
    10 * 1024 * 1024,
    problems,
  );

  let policies: PoliciesSettings | null = null;
  try {
    policies = loadPoliciesSettings(env);
  } catch (error) {
    if (!(error instanceof ConfigValidationError)) throw error;
    problems.push(...error.problems);
  }

  if (problems.length > 0 || policies === null) throw new ConfigValidationError(problems);
  return {
    port,
    host,
    database,
    redisUrl,
    adminKey,
    encryptionKey,
    previousEncryptionKeys,
    jobsEnabled,
    publicUrl,
    logLevel,
    dataDir,
    keyRotationTransitionMs,
    inviteTtlMs,
    logBodyMaxBytes,
    policies,
  };
}

/** A master key is 32 bytes, written as 64 hex characters or as base64. */
export function isMasterKey(value: string): boolean {
  if (/^[0-9a-fA-F]{64}$/.test(value)) return true;
  return /^[A-Za-z0-9+/]+={0,2}$/.test(value) && Buffer.from(value, 'base64').length === 32;
}

/** The 32 key bytes of a master key accepted by `isMasterKey`. */
export function masterKeyBytes(value: string): Buffer {
  return /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64');
}
