/** Test helpers: split text into byte chunks at awkward places, as a network would. */

const encoder = new TextEncoder();

export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** Splits the UTF-8 bytes of `text` into chunks of `size` bytes (which cuts multi-byte characters). */
export function chunkBytes(text: string, size: number): Uint8Array[] {
  const bytes = encoder.encode(text);
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return chunks;
}

/** Splits the bytes at the given offsets. */
export function splitAt(text: string, offsets: number[]): Uint8Array[] {
  const bytes = encoder.encode(text);
  const chunks: Uint8Array[] = [];
  let previous = 0;
  for (const offset of [...offsets, bytes.length]) {
    chunks.push(bytes.subarray(previous, offset));
    previous = offset;
  }
  return chunks;
}

/** An SSE stream from (event, data) pairs, with `\n\n` separators. */
export function sse(events: Array<[string | undefined, unknown]>): string {
  return events
    .map(([event, data]) => {
      const payload = typeof data === 'string' ? data : JSON.stringify(data);
      return (event ? `event: ${event}\n` : '') + `data: ${payload}\n\n`;
    })
    .join('');
}
