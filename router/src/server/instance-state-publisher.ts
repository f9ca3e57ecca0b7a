import type { ServerResponse } from 'node:http';
import { RouterError } from '../protocol';
import type { InstanceStateLog } from '../state/instance-state-log';
import { encodeInstanceState } from './instance-state-wire';

/** The longest an observer may ask to wait for a change (it answers with the unchanged state then: a heartbeat). */
export const MAX_INSTANCE_STATE_WAIT_MS = 30_000;

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
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

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
    if (waitMs === 0 || this.closed) {
      this.answer(waiter);
      return;
    }
    this.waiters.push(waiter);
    res.once('close', () => {
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
    const body = encodeInstanceState(this.log.updateSince(w.epoch, w.since));
    w.res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body) });
    w.res.end(body);
  }
}

function optionalInteger(query: URLSearchParams, name: string, min: number, max: number): number | undefined {
  const raw = query.get(name);
  if (raw === null) return undefined;
  const value = /^\d{1,16}$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= min && value <= max)) throw new RouterError('invalid_field', `query parameter ${name} must be an integer between ${min} and ${max} (got ${JSON.stringify(raw.slice(0, 40))})`);
  return value;
}
