import { isUuid, timeOrderedId } from './ids';

describe('timeOrderedId', () => {
  it('mints version-7 UUIDs in the RFC 9562 layout', () => {
    const id = timeOrderedId();
    expect(isUuid(id)).toBe(true);
    // Version nibble 7; variant bits 10.
    expect(id[14]).toBe('7');
    expect('89ab').toContain(id[19]);
  });

  it('carries the minting time in its first 48 bits', () => {
    const before = Date.now();
    const id = timeOrderedId();
    const after = Date.now();
    const millis = parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
    expect(millis).toBeGreaterThanOrEqual(before);
    expect(millis).toBeLessThanOrEqual(after);
  });

  it('sorts in minting order and never repeats, even within one millisecond', () => {
    const ids = Array.from({ length: 5_000 }, () => timeOrderedId());
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });
});
