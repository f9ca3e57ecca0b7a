/**
 * Error codes of the live benchmark, as they appear in RequestRecord.error and in the report's Errors section.
 * A request that fails is recorded with one of these, never dropped.
 *
 * - `http_<status>` or `http_<status>:<code>`: the server answered a non-2xx status (with an OpenAI-style error
 *   code when its body has one, e.g. `http_503:no_healthy_backend`, `http_400:BadRequestError`).
 * - `stream_error:<code>`: the stream ended with a terminal error event (e.g. the router's
 *   `stream_error:upstream_stream_failed` when a backend dies mid-stream).
 * - `stream_cut`: the connection failed after the response had started (no terminal event).
 * - `stream_incomplete`: the stream ended cleanly but without `data: [DONE]`.
 * - `bad_stream_data`: an event that is not JSON.
 * - `not_streamed`: a 2xx answer that is not `text/event-stream` (the server ignored `stream: true`).
 * - `connection_refused`, `connection_reset`, `dns_error`: the request got no response headers.
 * - `timeout`: no complete answer within the per-request timeout.
 * - `aborted`: the run was aborted (Ctrl-C) while the request was in flight.
 * - `drain_timeout`: still in flight when the drain time after the end of sending ran out.
 * - `client_error:<code>`: anything else the HTTP client raised.
 */

/** The codes of a request cancelled by the benchmark itself (its signal's reason): timeout, Ctrl-C, drain. */
export type CancelCode = 'timeout' | 'aborted' | 'drain_timeout';

export const CANCEL_CODES: readonly CancelCode[] = ['timeout', 'aborted', 'drain_timeout'];

/** True when an abort reason is one of ours (the signal's reason names why the request was cancelled). */
export function isCancelCode(value: unknown): value is CancelCode {
  return typeof value === 'string' && (CANCEL_CODES as readonly string[]).includes(value);
}

/** The code of a non-2xx answer, from its status and (a bounded prefix of) its body. */
export function httpErrorCode(status: number, bodyText: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    parsed = undefined;
  }
  const error = openAiErrorOf(parsed);
  return error?.code === undefined ? `http_${status}` : `http_${status}:${error.code}`;
}

/** The message of a non-2xx answer, for the record's detail (server messages never echo prompt text). */
export function httpErrorMessage(bodyText: string): string {
  try {
    const error = openAiErrorOf(JSON.parse(bodyText));
    if (error !== undefined && error.message !== '') return error.message.slice(0, 300);
  } catch {
    // not JSON
  }
  return bodyText.slice(0, 300);
}

function codeOf(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const e = err as { code?: unknown; errors?: unknown; cause?: unknown };
  if (typeof e.code === 'string') return e.code;
  if (Array.isArray(e.errors)) for (const inner of e.errors) if (codeOf(inner)) return codeOf(inner);
  return codeOf(e.cause);
}

/**
 * The code of a transport failure. `afterHeaders`: the response had started, so a broken connection cut the
 * stream rather than refusing the request.
 */
export function transportErrorCode(err: unknown, afterHeaders: boolean): string {
  const code = codeOf(err);
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection_refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'dns_error';
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
    case 'ETIMEDOUT':
      return 'timeout';
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
      return afterHeaders ? 'stream_cut' : 'connection_reset';
    default:
      return `client_error:${sanitizeCode(code ?? (err instanceof Error ? err.name : 'unknown'))}`;
  }
}

export function errorMessage(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).slice(0, 300);
}

/** Codes taken from a server go into report keys: keep them short and plain. */
export function sanitizeCode(raw: string): string {
  const cleaned = raw.replace(/[^A-Za-z0-9_.-]+/g, '_').slice(0, 64);
  return cleaned === '' ? 'unknown' : cleaned;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonEmptyString(value: unknown): boolean {
  return typeof value === 'string' && value.length > 0;
}

/**
 * The code of an OpenAI-style error object (`{"error":{"code","type","message"}}`, or vLLM's older top-level
 * `{"object":"error","type","code","message"}`): a string `code`, else the `type`, else undefined. vLLM puts
 * the HTTP status number in `code`, which says nothing the status does not, so its `type` is used then.
 */
export function openAiErrorOf(value: unknown): { code: string | undefined; message: string } | undefined {
  if (!isObject(value)) return undefined;
  const error = isObject(value.error) ? value.error : value.object === 'error' ? value : undefined;
  if (error === undefined) return undefined;
  const code = nonEmptyString(error.code)
    ? (error.code as string)
    : nonEmptyString(error.type)
      ? (error.type as string)
      : undefined;
  const message = typeof error.message === 'string' ? error.message : '';
  return { code: code === undefined ? undefined : sanitizeCode(code), message };
}
