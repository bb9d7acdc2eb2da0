import { randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Random base62 text; the modulo bias of 256 % 62 is irrelevant for identifiers. */
export function randomId(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += ALPHABET[bytes[i] % ALPHABET.length];
  return out;
}

/** OpenAI-style completion id, used when the upstream gives none we can reuse. */
export function generateChatCompletionId(): string {
  return `chatcmpl-${randomId(29)}`;
}

export function generateToolCallId(): string {
  return `call_${randomId(24)}`;
}

export function unixSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
