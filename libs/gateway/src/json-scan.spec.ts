import { topLevelJsonValue } from './json-scan';

const scan = (value: unknown, key = 'usage') =>
  topLevelJsonValue(Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)), key);

describe('topLevelJsonValue', () => {
  it('finds a top-level object member wherever it is', () => {
    const usage = { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 };
    expect(JSON.parse(scan({ id: 'x', choices: [{ message: { content: 'hi' } }], usage })!)).toEqual(usage);
    expect(JSON.parse(scan({ usage, id: 'x' })!)).toEqual(usage);
  });

  it('ignores the name inside strings, escaped quotes and nested members', () => {
    const answer = {
      choices: [
        { message: { content: 'a "usage": {"total_tokens": 999} \\" quote', usage: { total_tokens: 5 } } },
      ],
      metadata: { usage: 'nested' },
      usage: { total_tokens: 7 },
    };
    expect(JSON.parse(scan(answer)!)).toEqual({ total_tokens: 7 });
    expect(scan({ choices: [{ usage: { total_tokens: 5 } }], value: '"usage":1' })).toBeUndefined();
  });

  it('a value name is not a member name', () => {
    expect(scan({ kind: 'usage', other: 1 })).toBeUndefined();
  });

  it('reads literals, strings, arrays and null, with whitespace around the colon', () => {
    expect(scan('{ "usage" :  null , "x": 1 }')).toBe('null');
    expect(scan('{"a":1,"usage":42}')).toBe('42');
    expect(scan('{"usage":"t,ext}"}')).toBe('"t,ext}"');
    expect(scan('{"usage":[1,{"b":[2]}],"z":0}')).toBe('[1,{"b":[2]}]');
    expect(scan('\n {"usage":{"a":{"b":{}}}}')).toBe('{"a":{"b":{}}}');
  });

  it('answers undefined for a missing member, a non-object, or broken JSON', () => {
    expect(scan({ id: 'x' })).toBeUndefined();
    expect(scan([{ usage: 1 }])).toBeUndefined();
    expect(scan('{"usage":{"a":1')).toBeUndefined();
    expect(scan('{"unterminated')).toBeUndefined();
    expect(scan('')).toBeUndefined();
  });

  it('matches the member name exactly, multi-byte text before it included', () => {
    expect(scan({ usages: 1, usage: 2 })).toBe('2');
    expect(scan({ ü: 'ñ €', usage: { total_tokens: 3 } })).toBe('{"total_tokens":3}');
  });
});
