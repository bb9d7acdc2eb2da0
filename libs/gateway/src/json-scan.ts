const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

function isSpace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/**
 * The JSON text of one top-level member's value (`{"usage": {...}}` → `{...}`), found with a single
 * byte scan that tracks strings and nesting, so that reading one field of a large answer does not
 * build the whole object tree. Undefined when the document is not an object, the member is absent,
 * or the scan meets something that is not JSON. The result is not validated: parse it.
 */
export function topLevelJsonValue(bytes: Buffer, key: string): string | undefined {
  const wanted = Buffer.from(`"${key}"`);
  let index = 0;
  const length = bytes.length;
  while (index < length && isSpace(bytes[index])) index++;
  if (bytes[index] !== OPEN_BRACE) return undefined;
  let depth = 0;
  // At depth 1, a string that follows `{` or `,` is a member name.
  let expectName = false;
  for (; index < length; index++) {
    const byte = bytes[index];
    if (byte === QUOTE) {
      const start = index;
      index++;
      while (index < length && bytes[index] !== QUOTE) index += bytes[index] === BACKSLASH ? 2 : 1;
      if (index >= length) return undefined;
      if (depth !== 1 || !expectName) continue;
      expectName = false;
      if (
        index + 1 - start !== wanted.length ||
        bytes.compare(wanted, 0, wanted.length, start, index + 1) !== 0
      )
        continue;
      let valueStart = index + 1;
      while (valueStart < length && isSpace(bytes[valueStart])) valueStart++;
      if (bytes[valueStart] !== COLON) return undefined;
      valueStart++;
      while (valueStart < length && isSpace(bytes[valueStart])) valueStart++;
      const valueEnd = endOfValue(bytes, valueStart);
      return valueEnd === -1 ? undefined : bytes.toString('utf8', valueStart, valueEnd);
    }
    if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      depth++;
      expectName = depth === 1;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return undefined;
    } else if (byte === COMMA && depth === 1) {
      expectName = true;
    }
  }
  return undefined;
}

/** Index just past the value starting at `start` (an object, array, string or literal), or -1. */
function endOfValue(bytes: Buffer, start: number): number {
  const length = bytes.length;
  let depth = 0;
  for (let index = start; index < length; index++) {
    const byte = bytes[index];
    if (byte === QUOTE) {
      index++;
      while (index < length && bytes[index] !== QUOTE) index += bytes[index] === BACKSLASH ? 2 : 1;
      if (index >= length) return -1;
      if (depth === 0) return index + 1;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      depth++;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      if (depth === 0) return index;
      depth--;
      if (depth === 0) return index + 1;
    } else if (depth === 0 && (byte === COMMA || isSpace(byte))) {
      return index;
    }
  }
  return depth === 0 ? length : -1;
}
