import type { IncomingHttpHeaders } from 'node:http';

/**
 * SageMaker stateful sessions among the router's backends
 * (https://docs.aws.amazon.com/sagemaker/latest/dg/stateful-sessions.html): a session lives in the model container
 * that opened it, and SageMaker sends every later request naming the session to that instance. The router does the
 * same among its backends (the engines of a multi-engine container): it learns which backend opened a session from
 * the answer to a `NEW_SESSION` request (`X-Amzn-SageMaker-New-Session-Id: ID; Expires=…`), sends requests naming
 * the session there, and forgets the session when a backend closes it (`X-Amzn-SageMaker-Closed-Session-Id`), when
 * it expires, or when more than `maxSessions` are open (the oldest first).
 */
export const SESSION_ID_HEADER = 'x-amzn-sagemaker-session-id';
export const NEW_SESSION_ID_HEADER = 'x-amzn-sagemaker-new-session-id';
export const CLOSED_SESSION_ID_HEADER = 'x-amzn-sagemaker-closed-session-id';
/** The SessionId value that asks the model to open a session. */
export const NEW_SESSION = 'NEW_SESSION';
/** Sessions remembered at most (about 100 bytes each). */
export const MAX_SESSIONS = 100_000;

type HeaderValue = string | string[] | undefined;

function first(value: HeaderValue): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** `ID; Expires=2026-12-01T20:00:00Z` → the id and the expiry in ms (undefined when absent or unreadable). */
export function parseNewSessionHeader(value: string): { id: string; expiresAtMs: number | undefined } | undefined {
  const [idPart, ...attributes] = value.split(';');
  const id = idPart.trim();
  if (id === '') return undefined;
  let expiresAtMs: number | undefined;
  for (const attribute of attributes) {
    const m = /^\s*Expires\s*=\s*(.+?)\s*$/i.exec(attribute);
    if (m) {
      const t = Date.parse(m[1]);
      if (Number.isFinite(t)) expiresAtMs = t;
    }
  }
  return { id, expiresAtMs };
}

export class SessionAffinity {
  private readonly sessions = new Map<
    string,
    { readonly instance: string; readonly expiresAtMs: number | undefined }
  >();

  constructor(private readonly maxSessions = MAX_SESSIONS) {}

  get size(): number {
    return this.sessions.size;
  }

  /** True when the request takes part in a session (opens one or names one): its answer must be observed. */
  static involves(headers: IncomingHttpHeaders): boolean {
    return headers[SESSION_ID_HEADER] !== undefined;
  }

  /** The backend holding the session the request names, if this router saw it opened and it has not expired. */
  instanceFor(headers: IncomingHttpHeaders, nowMs: number): string | undefined {
    const id = first(headers[SESSION_ID_HEADER])?.trim();
    if (id === undefined || id === '' || id === NEW_SESSION) return undefined;
    const session = this.sessions.get(id);
    if (session === undefined) return undefined;
    if (session.expiresAtMs !== undefined && session.expiresAtMs <= nowMs) {
      this.sessions.delete(id);
      return undefined;
    }
    return session.instance;
  }

  /** Learns from the answer `instance` gave to a request that takes part in a session. */
  observe(instance: string, headers: Readonly<Record<string, HeaderValue>>, nowMs: number): void {
    const closed = first(headers[CLOSED_SESSION_ID_HEADER])?.trim();
    if (closed !== undefined && closed !== '') this.sessions.delete(closed);
    const opened = first(headers[NEW_SESSION_ID_HEADER]);
    const parsed = opened === undefined ? undefined : parseNewSessionHeader(opened);
    if (parsed === undefined || (parsed.expiresAtMs !== undefined && parsed.expiresAtMs <= nowMs)) return;
    this.sessions.delete(parsed.id);
    this.sessions.set(parsed.id, { instance, expiresAtMs: parsed.expiresAtMs });
    // A Map iterates in insertion order: the first key is the oldest session.
    while (this.sessions.size > this.maxSessions) this.sessions.delete(this.sessions.keys().next().value as string);
  }
}
