/**
 * An incremental decoder of server-sent events (the WHATWG event-stream format) for the benchmark client:
 * bytes go in as they arrive off the socket, whole events come out, so the time an event is seen is the time
 * its last byte arrived. Handles LF, CRLF and CR line ends (also split across chunks), multi-line `data`,
 * comments, and UTF-8 characters split across chunks.
 */
export interface SseEvent {
  /** The `event:` field; 'message' when absent. */
  readonly type: string;
  /** The `data:` lines joined with '\n'. */
  readonly data: string;
}

export class SseDecoder {
  private readonly decoder = new TextDecoder('utf-8');
  private partialLine = '';
  /** The previous chunk ended in CR: a LF starting the next chunk belongs to that line end. */
  private skipLeadingLf = false;
  private dataLines: string[] = [];
  private eventType = '';

  /** Feeds bytes; returns the events they complete (possibly none). */
  push(chunk: Uint8Array): SseEvent[] {
    let text = this.decoder.decode(chunk, { stream: true });
    if (this.skipLeadingLf && text.startsWith('\n')) text = text.slice(1);
    if (text.length === 0) return [];
    this.skipLeadingLf = text.endsWith('\r');
    const joined = this.partialLine + text;
    const lines = joined.includes('\r') ? joined.split(/\r\n|\r|\n/) : joined.split('\n');
    this.partialLine = lines.pop() ?? '';
    const events: SseEvent[] = [];
    for (const line of lines) this.line(line, events);
    return events;
  }

  /**
   * The stream ended. The format says an event without its closing blank line is dropped; we deliver it,
   * because some servers end with `data: [DONE]` and no blank line, and a lost [DONE] would read as a cut.
   */
  end(): SseEvent[] {
    const events: SseEvent[] = [];
    const rest = this.partialLine + this.decoder.decode();
    this.partialLine = '';
    if (rest.length > 0) this.line(rest, events);
    this.line('', events);
    return events;
  }

  private line(line: string, events: SseEvent[]): void {
    if (line === '') {
      if (this.dataLines.length > 0)
        events.push({ type: this.eventType || 'message', data: this.dataLines.join('\n') });
      this.dataLines = [];
      this.eventType = '';
      return;
    }
    if (line.startsWith(':')) return; // comment (keep-alive)
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.dataLines.push(value);
    else if (field === 'event') this.eventType = value;
  }
}
