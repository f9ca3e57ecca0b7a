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

  /** @param maxEventBytes most bytes of one unfinished event held back (MAX_SSE_EVENT_BYTES) */
  constructor(private readonly maxEventBytes = MAX_SSE_EVENT_BYTES) {}

  /**
   * Returns the bytes that complete one or more events (possibly empty), keeping any unfinished tail. Throws
   * SseEventTooLargeError (dropping the tail) once the tail passes maxEventBytes: a backend that never sends an
   * event boundary is not held whole in memory.
   */
  push(chunk: Buffer): Buffer {
    const bytes = this.pending === undefined ? chunk : Buffer.concat([this.pending, chunk]);
    const end = lastEventBoundary(bytes);
    this.pending = end < bytes.length ? bytes.subarray(end) : undefined;
    if (this.pending !== undefined && this.pending.length > this.maxEventBytes) {
      this.pending = undefined;
      throw new SseEventTooLargeError(this.maxEventBytes);
    }
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

/**
 * Most bytes of one server-sent event the router holds back waiting for its end. vLLM's events are a chunk of a
 * few tokens, well under a kilobyte, or a few kilobytes with logprobs; 1 MiB leaves room for any real event.
 */
export const MAX_SSE_EVENT_BYTES = 1024 * 1024;

/** A backend's SSE stream had an event longer than the aligner holds: the stream is ended with an error event. */
export class SseEventTooLargeError extends Error {
  readonly code = 'SSE_EVENT_TOO_LARGE';

  constructor(readonly maxEventBytes: number) {
    super(`the backend sent more than ${maxEventBytes} bytes without an SSE event boundary`);
    this.name = 'SseEventTooLargeError';
  }
}

/** The terminal event sent when the backend fails mid-stream: an OpenAI-style error, then [DONE] (as vLLM). */
export function sseErrorEvent(error: {
  message: string;
  type: string;
  code: string | number;
  param?: string | null;
}): Buffer {
  return Buffer.from(`data: ${JSON.stringify({ error })}\n\ndata: [DONE]\n\n`, 'utf8');
}

export function isEventStream(contentType: string | string[] | undefined): boolean {
  const v = Array.isArray(contentType) ? contentType[0] : contentType;
  return v !== undefined && v.toLowerCase().startsWith(SSE_CONTENT_TYPE);
}
