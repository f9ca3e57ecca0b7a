import type { ServerResponse } from 'node:http';
import { RouterError } from '../protocol';
import type { InstanceStateLog } from '../state/instance-state-log';
import { encodeInstanceState } from './instance-state-wire';

/** The longest an observer may ask to wait for a change (it answers with the unchanged state then: a heartbeat). */
export const MAX_INSTANCE_STATE_WAIT_MS = 30_000;
/**
 * Long polls one peer address may hold waiting at once; more are refused with 429. An observing router holds one
 * per backend it follows, so this leaves room for several router processes behind one address (a node, a NAT)
 * while a client that opens polls without end cannot pile up waiting responses.
 */
export const MAX_WAITING_POLLS_PER_PEER = 16;
/**
 * Encoded `since` answers kept at one version beside the snapshot, by count and by bytes; past either, the least
 * recently asked goes. Each distinct `since` is its own answer: unbounded, distinct points grew a publisher's memory
 * by gigabytes until the state changed. Observers at one version ask at one or two points (where they stopped).
 */
export const MAX_ENCODED_SINCE_POINTS = 8;
export const MAX_ENCODED_SINCE_BYTES = 4 * 1024 * 1024;

interface Waiter {
  readonly epoch: string | undefined;
  readonly since: number | undefined;
  readonly version: number | undefined;
  readonly deadlineMs: number;
  readonly res: ServerResponse;
}

/**
 * Serves GET /router/v1/instance-state: this router's InstanceStateLog to the routers that observe it.
 *
 * Long poll: `?epoch=E&since=S&version=V&waitMs=W`. An observer that is behind (other epoch or version) is
 * answered at the next batch tick; one that is current waits for a change, or W ms (then it gets the unchanged
 * state, which tells it the publisher is alive). Batching every `batchMs` bounds both how stale an observer is and
 * how often it is answered, whatever the request rate; the timer runs only while someone waits.
 */
export class InstanceStatePublisher {
  private waiters: Waiter[] = [];
  private readonly waitingByPeer = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /**
   * Encoded answers at `encodedVersion`: the snapshot, and the events since a few recent points (most recently asked
   * last), within MAX_ENCODED_SINCE_POINTS and MAX_ENCODED_SINCE_BYTES. Observers polling at one version cost one
   * encoding, not one each (32 concurrent full snapshots re-encoded per request slowed this process's /ping from
   * 0.24 ms to 131 ms p50). Emptied when the version moves.
   */
  private encodedSnapshot: string | undefined;
  private readonly encodedSince = new Map<string, string>();
  private encodedSinceBytes = 0;
  private encodedVersion = -1;

  constructor(
    readonly log: InstanceStateLog,
    readonly batchMs: number,
  ) {}

  serve(query: URLSearchParams, res: ServerResponse): void {
    const waitMs = optionalInteger(query, 'waitMs', 0, MAX_INSTANCE_STATE_WAIT_MS) ?? 0;
    const waiter: Waiter = {
      epoch: query.get('epoch') ?? undefined,
      since: optionalInteger(query, 'since', 0, Number.MAX_SAFE_INTEGER),
      version: optionalInteger(query, 'version', 0, Number.MAX_SAFE_INTEGER),
      deadlineMs: Date.now() + waitMs,
      res,
    };
    // A snapshot fetch is answered at once (one cached encoding); a `since` poll, whatever its waitMs, waits for
    // the next batch tick at least, counted against its address: each distinct point costs an encoding.
    if ((waitMs === 0 && waiter.since === undefined) || this.closed) {
      this.answer(waiter);
      return;
    }
    const peer = res.req.socket.remoteAddress ?? '';
    const waiting = this.waitingByPeer.get(peer) ?? 0;
    if (waiting >= MAX_WAITING_POLLS_PER_PEER) {
      throw new RouterError(
        'too_many_requests',
        `this address already holds ${MAX_WAITING_POLLS_PER_PEER} instance-state polls waiting, the limit`,
        { retryAfterSeconds: 1 },
      );
    }
    this.waitingByPeer.set(peer, waiting + 1);
    this.waiters.push(waiter);
    res.once('close', () => {
      const left = (this.waitingByPeer.get(peer) ?? 1) - 1;
      if (left > 0) this.waitingByPeer.set(peer, left);
      else this.waitingByPeer.delete(peer);
      if (!res.writableFinished) this.waiters = this.waiters.filter((w) => w !== waiter);
    });
    this.timer ??= setInterval(() => this.tick(), this.batchMs);
  }

  /** Answers every waiting observer now, and later ones at once (shutdown): none is left hanging. */
  close(): void {
    this.closed = true;
    for (const w of this.waiters.splice(0)) this.answer(w);
    this.stopTimer();
  }

  private tick(): void {
    const now = Date.now();
    const { epoch, version } = this.log;
    const waiting: Waiter[] = [];
    for (const w of this.waiters) {
      if (w.epoch !== epoch || w.version !== version || now >= w.deadlineMs) this.answer(w);
      else waiting.push(w);
    }
    this.waiters = waiting;
    if (waiting.length === 0) this.stopTimer();
  }

  private stopTimer(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  private answer(w: Waiter): void {
    if (w.res.destroyed) return;
    const body = this.encoded(w.epoch, w.since);
    w.res.writeHead(200, {
      'content-type': 'application/json',
      'cache-control': 'no-store',
      'content-length': Buffer.byteLength(body),
    });
    w.res.end(body);
  }

  private encoded(epoch: string | undefined, since: number | undefined): string {
    if (this.log.version !== this.encodedVersion) {
      this.encodedSnapshot = undefined;
      this.encodedSince.clear();
      this.encodedSinceBytes = 0;
      this.encodedVersion = this.log.version;
    }
    const kind = this.log.answerKind(epoch, since);
    if (kind === 'snapshot') return (this.encodedSnapshot ??= encodeInstanceState(this.log.updateSince(epoch, since)));
    let body = this.encodedSince.get(kind);
    if (body !== undefined) {
      // Most recently asked last: the next eviction takes the point no observer asked for longest.
      this.encodedSince.delete(kind);
      this.encodedSince.set(kind, body);
      return body;
    }
    body = encodeInstanceState(this.log.updateSince(epoch, since));
    this.encodedSince.set(kind, body);
    this.encodedSinceBytes += body.length;
    for (const [oldest, answer] of this.encodedSince) {
      if (this.encodedSince.size <= MAX_ENCODED_SINCE_POINTS && this.encodedSinceBytes <= MAX_ENCODED_SINCE_BYTES)
        break;
      this.encodedSince.delete(oldest);
      this.encodedSinceBytes -= answer.length;
    }
    return body;
  }
}

function optionalInteger(query: URLSearchParams, name: string, min: number, max: number): number | undefined {
  const raw = query.get(name);
  if (raw === null) return undefined;
  const value = /^\d{1,16}$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= min && value <= max))
    throw new RouterError(
      'invalid_field',
      `query parameter ${name} must be an integer between ${min} and ${max} (got ${JSON.stringify(raw.slice(0, 40))})`,
    );
  return value;
}
