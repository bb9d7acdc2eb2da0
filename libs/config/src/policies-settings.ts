import { ConfigValidationError } from './app-config';

/**
 * Settings of the policies area, read by loadConfig with the rest of the configuration (all
 * problems reported at once).
 *
 * | variable | meaning | default |
 * | GATEWAY_POLICY_REDIS_PREFIX | key prefix of the shared counters in Redis | `switchboard:policies:` |
 * | GATEWAY_POLICY_FLUSH_MS | how often settled budget usage is written to the database | 1000 |
 * | GATEWAY_POLICY_RESERVATION_TTL_MS | an unsettled budget reservation is given back after this | 900000 (15 min) |
 * | SMTP_URL | e.g. `smtp://user:pass@mail.example.com:587`; or the five below | unset: alerts are logged, not sent |
 * | SMTP_HOST, SMTP_PORT, SMTP_USER, SMTP_PASS | the same, split | port 587 |
 * | SMTP_SECURE | TLS from the first byte (port 465) | false |
 * | SMTP_FROM | sender of alert e-mails | `Switchboard <switchboard@localhost>` |
 */
export interface SmtpSettings {
  url: string | null;
  host: string | null;
  port: number;
  secure: boolean;
  user: string | null;
  pass: string | null;
  from: string;
}

export interface PoliciesSettings {
  redisPrefix: string;
  flushIntervalMs: number;
  reservationTtlMs: number;
  /** Budget counters in Redis live this long after their last write (then re-seed from the database). */
  budgetTtlMs: number;
  smtp: SmtpSettings | null;
}

function integer(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  min: number,
  max: number,
  problems: string[],
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    problems.push(`${name} must be an integer between ${min} and ${max} (got "${raw}")`);
    return fallback;
  }
  return Number(raw);
}

export function loadPoliciesSettings(env: NodeJS.ProcessEnv = process.env): PoliciesSettings {
  const problems: string[] = [];
  const redisPrefix = env.GATEWAY_POLICY_REDIS_PREFIX ?? 'switchboard:policies:';
  if (redisPrefix.length > 100 || /\s/.test(redisPrefix))
    problems.push('GATEWAY_POLICY_REDIS_PREFIX must be at most 100 characters without spaces');
  const flushIntervalMs = integer(env, 'GATEWAY_POLICY_FLUSH_MS', 1_000, 50, 60_000, problems);
  const reservationTtlMs = integer(
    env,
    'GATEWAY_POLICY_RESERVATION_TTL_MS',
    15 * 60_000,
    1_000,
    24 * 3_600_000,
    problems,
  );

  let smtp: SmtpSettings | null = null;
  const url = env.SMTP_URL || null;
  const host = env.SMTP_HOST || null;
  if (url !== null && !/^smtps?:\/\/[^\s]+$/.test(url))
    problems.push('SMTP_URL must start with smtp:// or smtps://');
  if (url !== null && host !== null) problems.push('Set SMTP_URL or SMTP_HOST, not both');
  const port = integer(env, 'SMTP_PORT', 587, 1, 65_535, problems);
  const secureRaw = (env.SMTP_SECURE ?? '').toLowerCase();
  if (secureRaw !== '' && !['true', 'false', '1', '0'].includes(secureRaw))
    problems.push(`SMTP_SECURE must be true or false (got "${env.SMTP_SECURE}")`);
  const user = env.SMTP_USER || null;
  const pass = env.SMTP_PASS || null;
  if ((user === null) !== (pass === null)) problems.push('SMTP_USER and SMTP_PASS go together');
  const from = env.SMTP_FROM || 'Switchboard <switchboard@localhost>';
  if (!/@/.test(from)) problems.push('SMTP_FROM must be an e-mail address, optionally with a name');
  if (url !== null || host !== null) {
    smtp = { url, host, port, secure: secureRaw === 'true' || secureRaw === '1', user, pass, from };
  }

  if (problems.length > 0) throw new ConfigValidationError(problems);
  return { redisPrefix, flushIntervalMs, reservationTtlMs, budgetTtlMs: 40 * 86_400_000, smtp };
}
