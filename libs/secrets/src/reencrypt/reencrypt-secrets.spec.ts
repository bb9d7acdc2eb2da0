import { SecretCipher } from '../secret-cipher';
import { ColumnReport, rewriteValue } from './reencrypt-secrets';

const old = new SecretCipher('a1'.repeat(32));
const cipher = new SecretCipher('b2'.repeat(32), ['a1'.repeat(32)]);

function counts(): ColumnReport {
  return {
    table: 't',
    column: 'c',
    sealed: 0,
    current: 0,
    rewritten: 0,
    changedConcurrently: 0,
    malformed: 0,
  };
}

describe('rewriteValue', () => {
  it('re-seals a whole value under the current key and leaves current ones alone', () => {
    const c = counts();
    const next = rewriteValue(old.encrypt('sk-1'), cipher, c)!;
    expect(SecretCipher.keyIdOf(next)).toBe(cipher.currentKeyId);
    expect(cipher.decrypt(next)).toBe('sk-1');
    expect(rewriteValue(next, cipher, c)).toBeNull();
    expect(c).toMatchObject({ sealed: 2, current: 1, rewritten: 1 });
  });

  it('replaces only the sealed leaves of JSON text, keeping every other byte', () => {
    const c = counts();
    const sealed = old.encrypt('sk-json');
    const text = `{ "b": 1e400, "a": ["${sealed}", "enc:v1: in prose"], "z": {"k": "${sealed}"} }`;
    const next = rewriteValue(text, cipher, c)!;
    const resealed = /"a": \["([^"]+)"/.exec(next)![1];
    expect(next).toBe(text.split(sealed).join(resealed));
    expect(cipher.decrypt(resealed)).toBe('sk-json');
    expect(c).toMatchObject({ sealed: 2, rewritten: 2 });
  });

  it('ignores text that only mentions the prefix, and counts look-alikes as malformed', () => {
    const c = counts();
    expect(rewriteValue('see "enc:v1:" in the docs', cipher, c)).toBeNull();
    expect(rewriteValue('{"note": "enc:v1:garbage"}', cipher, c)).toBeNull();
    expect(rewriteValue('enc:v1:garbage', cipher, c)).toBeNull();
    expect(c).toMatchObject({ sealed: 0, malformed: 1 });
  });

  it('refuses a value of a key it does not have', () => {
    const stranger = new SecretCipher('c3'.repeat(32)).encrypt('x');
    expect(() => rewriteValue(stranger, cipher, counts())).toThrow(/GATEWAY_ENCRYPTION_KEYS_PREVIOUS/);
    expect(() => rewriteValue(`{"k":"${stranger}"}`, cipher, counts())).toThrow(
      /GATEWAY_ENCRYPTION_KEYS_PREVIOUS/,
    );
  });
});
