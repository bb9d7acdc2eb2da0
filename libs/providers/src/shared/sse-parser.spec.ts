import { chunkBytes, utf8 } from '../testing/bytes';
import { SseEvent, SseParser } from './sse-parser';

function parseAll(chunks: Uint8Array[]): SseEvent[] {
  const parser = new SseParser();
  const events: SseEvent[] = [];
  for (const chunk of chunks) events.push(...parser.feed(chunk));
  events.push(...parser.end());
  return events;
}

describe('SseParser', () => {
  const stream =
    ': keep-alive comment\n\n' +
    'event: message_start\ndata: {"a":1}\n\n' +
    'data: first line\ndata: second line\n\n' +
    'id: 7\nevent: delta\r\ndata:no-space\r\n\r\n' +
    'retry: 1000\ndata: {"text":"héllo 🌍"}\n\n' +
    'data: [DONE]\n\n';

  const expected: SseEvent[] = [
    { event: 'message_start', data: '{"a":1}' },
    { data: 'first line\nsecond line' },
    { event: 'delta', data: 'no-space', id: '7' },
    { data: '{"text":"héllo 🌍"}', id: '7' },
    { data: '[DONE]', id: '7' },
  ];

  it('parses events, comments, multi-line data, ids and CRLF', () => {
    expect(parseAll([utf8(stream)])).toEqual(expected);
  });

  it.each([1, 2, 3, 5, 7, 13])('gives the same events when split into %i-byte chunks', (size) => {
    expect(parseAll(chunkBytes(stream, size))).toEqual(expected);
  });

  it('treats a lone CR as a line end, also when the LF of a CRLF arrives in the next chunk', () => {
    expect(parseAll([utf8('data: a\r'), utf8('\ndata: b\r\r'), utf8('data: c\r\r')])).toEqual([
      { data: 'a\nb' },
      { data: 'c' },
    ]);
  });

  it('returns several events from one chunk and nothing for an unfinished one', () => {
    const parser = new SseParser();
    expect(parser.feed(utf8('data: 1\n\ndata: 2\n\ndata: 3'))).toEqual([{ data: '1' }, { data: '2' }]);
    expect(parser.feed(utf8('3\n'))).toEqual([]);
    expect(parser.feed(utf8('\n'))).toEqual([{ data: '33' }]);
  });

  it('delivers a last event that lacks its closing blank line at end()', () => {
    const parser = new SseParser();
    expect(parser.feed(utf8('event: x\ndata: tail'))).toEqual([]);
    expect(parser.end()).toEqual([{ event: 'x', data: 'tail' }]);
  });

  it('skips events without data and a leading byte order mark', () => {
    expect(parseAll([utf8('\uFEFFevent: ping\n\ndata: ok\n\n')])).toEqual([{ data: 'ok' }]);
  });

  it('keeps an empty data field and a field without a colon', () => {
    expect(parseAll([utf8('data\n\ndata:\ndata:\n\n')])).toEqual([{ data: '' }, { data: '\n' }]);
  });
});
