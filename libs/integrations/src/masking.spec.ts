import { maskSecret } from './masking';

describe('maskSecret', () => {
  it('keeps a recognisable prefix and suffix of long secrets only', () => {
    expect(maskSecret('sk-proj-0123456789abcdef')).toBe('sk-...cdef');
    expect(maskSecret('12345678')).toBe('...78');
    expect(maskSecret('1234567')).toBe('********');
    expect(maskSecret('sk-proj-0123456789abcdef')).not.toContain('0123456789');
  });
});
