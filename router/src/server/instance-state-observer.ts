import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Backend } from './backend';
import {
  checkStateHashKey,
  processStateHashKey,
  StateHashKeyMismatchError,
  type StateHashKey,
} from '../state/state-hash-key';
import { decodeInstanceState } from './instance-state-wire';
import { describeUpstreamError } from './proxy';

/** How long a current observer's poll waits for a change: the publisher's heartbeat period. */
export const OBSERVE_WAIT_MS = 1_000;
/** An observation older than this is not used: the instance has missed two heartbeats. */
export const OBSERVATION_STALE_MS = 3 * OBSERVE_WAIT_MS;
/**
 * The most an observer reads of one answer. A full snapshot costs about 21 bytes a block (its 64-bit hash and
 * recency, base64 in JSON): 0.33 MB for the default 1 M-token cache, about 0.45 MB for the p5 profile's 1.35 M
 * tokens. 32 MiB is about seventy times that, and a peer that streams without end cannot fill this router's memory.
 */
export const MAX_INSTANCE_STATE_BYTES = 32 * 1024 * 1024;
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 5_000;

/**
 * Follows every backend's GET /router/v1/instance-state (InstanceStatePublisher) with long polls, keeping each
 * Backend's observation current: the load the instance counts from every router replica, and the routing blocks
 * it was sent. A backend that does not publish, fails or answers nonsense is routed on this router's own view
 * (warned once until it recovers) and retried with backoff; nothing here can fail a request. A backend whose
 * blocks are keyed with another secret than this router's (StateHashKey) is refused the same way, logged as an
 * error: its blocks could never match this router's, and following it would predict no hit anywhere.
 */
export class InstanceStateObserver {
  private readonly abort = new AbortController();
  private loops: Promise<void>[] = [];

  constructor(
    private readonly backends: readonly Backend[],
    private readonly log: Logger,
    private readonly timeoutMs: number,
    /** The Authorization header sent to each published state (the upstream key, which the sidecar accepts), if any. */
    private readonly authorization: () => string | undefined = () => undefined,
    /** The secret this router keys its block hashes with: a published state keyed otherwise is refused. */
    private readonly hashKey: StateHashKey = processStateHashKey(),
  ) {}

  start(): void {
    this.loops = this.backends.map((b) => this.follow(b));
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.allSettled(this.loops);
  }

  private async follow(backend: Backend): Promise<void> {
    const signal = this.abort.signal;
    let failures = 0;
    while (!signal.aborted) {
      try {
        await this.pollOnce(backend);
        if (failures > 0) this.log.info({ backend: backend.id }, 'observing instance state again');
        failures = 0;
      } catch (err) {
        if (signal.aborted) return;
        backend.observation.reset();
        if (failures === 0) {
          const level = err instanceof StateHashKeyMismatchError ? 'error' : 'warn';
          this.log[level](
            { backend: backend.id, error: describeUpstreamError(err) },
            "cannot observe the instance's state; routing on this router's own view of it",
          );
        }
        failures++;
        await sleep(Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** Math.min(failures - 1, 6)), undefined, {
          signal,
        }).catch(() => undefined);
      }
    }
  }

  private async pollOnce(backend: Backend): Promise<void> {
    const o = backend.observation;
    const query = new URLSearchParams({ waitMs: String(OBSERVE_WAIT_MS) });
    if (o.epoch !== undefined) {
      query.set('epoch', o.epoch);
      query.set('since', String(o.seq));
      query.set('version', String(o.version));
    }
    const authorization = this.authorization();
    const res = await backend.pool.request({
      method: 'GET',
      ...(authorization !== undefined ? { headers: { authorization } } : {}),
      path: `${backend.basePath}/router/v1/instance-state?${query.toString()}`,
      signal: this.abort.signal,
      headersTimeout: OBSERVE_WAIT_MS + this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
    if (res.statusCode !== 200) {
      await res.body.dump();
      throw new Error(`GET /router/v1/instance-state answered HTTP ${res.statusCode}`);
    }
    const update = decodeInstanceState(await readJsonAtMost(res.body, MAX_INSTANCE_STATE_BYTES));
    checkStateHashKey(backend.id, { id: update.hashKeyId, source: update.hashKeySource }, this.hashKey);
    backend.applyObservation(update, Date.now());
  }
}

/** Parses a body as JSON, failing (and closing the body) as soon as it passes `maxBytes`. */
async function readJsonAtMost(
  body: AsyncIterable<Buffer> & { destroy(err?: Error): unknown },
  maxBytes: number,
): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) {
      body.destroy();
      throw new Error(`the instance state is larger than ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}
