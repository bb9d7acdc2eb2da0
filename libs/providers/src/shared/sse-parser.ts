/**
 * Incremental Server-Sent Events parser (WHATWG event-stream rules).
 *
 * Network chunks split events (and UTF-8 sequences) anywhere, or carry several events at once, so
 * the parser keeps only the unfinished line and the fields of the event being built. Each byte is
 * decoded and scanned once: the cost of `feed` is proportional to the chunk, not to the stream.
 */

export interface SseEvent {
  /** The `event:` field; absent means the default `message` type. */
  event?: string;
  /** `data:` lines joined with `\n`. */
  data: string;
  id?: string;
}

export class SseParser {
  private readonly decoder = new TextDecoder('utf-8');
  /** Text of the current line that has not seen its line terminator yet. */
  private partialLine = '';
  /** A line ended with `\r`: a `\n` that starts the next chunk belongs to that terminator. */
  private skipLeadingLineFeed = false;
  private sawFirstLine = false;
  private eventType: string | undefined;
  private dataLines: string[] = [];
  private lastEventId: string | undefined;

  feed(chunk: Uint8Array): SseEvent[] {
    return this.feedText(this.decoder.decode(chunk, { stream: true }));
  }

  feedText(text: string): SseEvent[] {
    const events: SseEvent[] = [];
    let start = 0;
    if (this.skipLeadingLineFeed && text.length > 0) {
      if (text.charCodeAt(0) === 10) start = 1;
      this.skipLeadingLineFeed = false;
    }
    for (let i = start; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code !== 10 && code !== 13) continue;
      const line =
        this.partialLine.length > 0 ? this.partialLine + text.slice(start, i) : text.slice(start, i);
      this.partialLine = '';
      this.processLine(line, events);
      if (code === 13) {
        if (i + 1 < text.length) {
          if (text.charCodeAt(i + 1) === 10) i++;
        } else {
          this.skipLeadingLineFeed = true;
        }
      }
      start = i + 1;
    }
    if (start < text.length) this.partialLine += text.slice(start);
    return events;
  }

  /**
   * The upstream closed. Strictly, an event without its closing blank line is dropped; some
   * upstreams omit the final blank line, so a pending event with data is still delivered.
   */
  end(): SseEvent[] {
    const events: SseEvent[] = [];
    const tail = this.decoder.decode();
    if (tail.length > 0) events.push(...this.feedText(tail));
    if (this.partialLine.length > 0) {
      const line = this.partialLine;
      this.partialLine = '';
      this.processLine(line, events);
    }
    this.dispatch(events);
    return events;
  }

  private processLine(rawLine: string, events: SseEvent[]): void {
    let line = rawLine;
    if (!this.sawFirstLine) {
      this.sawFirstLine = true;
      if (line.charCodeAt(0) === 0xfeff) line = line.slice(1);
    }
    if (line.length === 0) {
      this.dispatch(events);
      return;
    }
    if (line.charCodeAt(0) === 58 /* ':' comment */) return;
    const colon = line.indexOf(':');
    let field: string;
    let value: string;
    if (colon === -1) {
      field = line;
      value = '';
    } else {
      field = line.slice(0, colon);
      value = line.charCodeAt(colon + 1) === 32 ? line.slice(colon + 2) : line.slice(colon + 1);
    }
    switch (field) {
      case 'data':
        this.dataLines.push(value);
        break;
      case 'event':
        this.eventType = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      default:
        // `retry` and unknown fields carry nothing an adapter needs.
        break;
    }
  }

  private dispatch(events: SseEvent[]): void {
    if (this.dataLines.length === 0) {
      this.eventType = undefined;
      return;
    }
    const event: SseEvent = {
      data: this.dataLines.length === 1 ? this.dataLines[0] : this.dataLines.join('\n'),
    };
    if (this.eventType !== undefined && this.eventType !== '') event.event = this.eventType;
    if (this.lastEventId !== undefined) event.id = this.lastEventId;
    events.push(event);
    this.dataLines = [];
    this.eventType = undefined;
  }
}
