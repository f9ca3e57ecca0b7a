/**
 * Server-sent events helpers. The router forwards SSE bytes as they arrive, cut at event boundaries: a chunk
 * is passed on up to its last complete event and only an unfinished event's bytes wait for the rest. That
 * costs no latency for whole events (vLLM writes one event per chunk) and guarantees that when the backend
 * fails mid-stream, the terminal error event the router appends is never glued to half an event.
 */
export const SSE_CONTENT_TYPE = 'text/event-stream';

const LF_LF = Buffer.from('\n\n');
const CRLF_CRLF = Buffer.from('\r\n\r\n');

/** Index just past the last event boundary ("\n\n" or "\r\n\r\n") in `bytes`, or 0 when there is none. */
export function lastEventBoundary(bytes: Buffer): number {
  const lf = bytes.lastIndexOf(LF_LF);
  const crlf = bytes.lastIndexOf(CRLF_CRLF);
  return Math.max(lf === -1 ? 0 : lf + 2, crlf === -1 ? 0 : crlf + 4);
}

export class SseEventAligner {
  private pending: Buffer | undefined;

  /** Returns the bytes that complete one or more events (possibly empty), keeping any unfinished tail. */
  push(chunk: Buffer): Buffer {
    const bytes = this.pending === undefined ? chunk : Buffer.concat([this.pending, chunk]);
    const end = lastEventBoundary(bytes);
    this.pending = end < bytes.length ? bytes.subarray(end) : undefined;
    return end === bytes.length ? bytes : bytes.subarray(0, end);
  }

  /** True when bytes of an unfinished event are held back. */
  get hasPartialEvent(): boolean {
    return this.pending !== undefined;
  }

  /** At a clean end of stream: whatever is held back (a final event without its blank line). */
  flush(): Buffer | undefined {
    const rest = this.pending;
    this.pending = undefined;
    return rest;
  }
}

/** The terminal event sent when the backend fails mid-stream: an OpenAI-style error, then [DONE] (as vLLM). */
export function sseErrorEvent(error: { message: string; type: string; code: string | number; param?: string | null }): Buffer {
  return Buffer.from(`data: ${JSON.stringify({ error })}\n\ndata: [DONE]\n\n`, 'utf8');
}

export function isEventStream(contentType: string | string[] | undefined): boolean {
  const v = Array.isArray(contentType) ? contentType[0] : contentType;
  return v !== undefined && v.toLowerCase().startsWith(SSE_CONTENT_TYPE);
}
