import type { ServerResponse } from 'node:http';
import { FlowControlQueue, type FlowControlSettings } from '../core/flow-control';
import { RouterError } from '../protocol';
import type { RouterMetrics } from './router-metrics';
import { ClientGoneError } from './request-body';

/**
 * Flow control by priority class in the live router: the rule of core/flow-control.ts (the one the simulator
 * runs) over requests that wait here as promises. A held request is re-decided, most urgent and oldest first,
 * whenever the router's own load drops (a first token, an attempt's end: `wake`), and at least every
 * FLOW_CONTROL_RECHECK_MS, because load observed from other routers drops without an event here. It leaves when
 * the instance the policy then chooses admits it, when its client goes away, or never waits at all: the queue
 * full is the client's 429 flow_control_full with Retry-After.
 */
export const FLOW_CONTROL_RECHECK_MS = 250;

/** Decides the request when `admits` lets the chosen instance take it; undefined: turned away, nothing committed. */
export type AdmittedDecision<A> = (admits: (queuedPrefillTokens: number) => boolean) => A | undefined;

interface Held {
  readonly tryDecide: () => unknown;
  readonly settle: (decided: unknown, error?: unknown) => void;
}

export class FlowGate {
  private readonly queue: FlowControlQueue<Held>;
  private recheck: NodeJS.Timeout | undefined;

  constructor(
    settings: FlowControlSettings,
    private readonly metrics: RouterMetrics,
  ) {
    this.queue = new FlowControlQueue(settings);
  }

  /** Requests waiting here now. */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * Whether `place` could hold a request of this priority. When not, the caller decides it at once, as without flow
   * control: no promise, no closures, no queue (the per-request cost of flow control for traffic without classes).
   */
  mayHold(priority: number | undefined): boolean {
    return this.queue.mayHold(priority);
  }

  /**
   * The request's decision, at once or after waiting here. Throws flow_control_full when it would wait and the
   * queue is full, ClientGoneError when its client left while it waited, and whatever `decide` throws.
   */
  async place<A>(priority: number | undefined, decide: AdmittedDecision<A>, res: ServerResponse): Promise<A> {
    const admits = (queued: number): boolean => this.queue.admits(priority, queued);
    const tryDecide = (): A | undefined => decide(admits);
    let settle: Held['settle'] = () => undefined;
    const held: Held = { tryDecide, settle: (decided, error) => settle(decided, error) };
    let verdict = this.queue.offer(held, priority);
    if (verdict === 'route') {
      const decided = tryDecide();
      if (decided !== undefined) return decided;
      verdict = this.queue.hold(held, priority as number);
    }
    if (verdict === 'refuse') throw this.full();
    return this.wait(held, res, (resolver) => (settle = resolver)) as Promise<A>;
  }

  /** Load dropped: held requests leave most urgent first while the instance chosen for the head admits it. */
  wake(): void {
    // Nothing held (the common case, twice per request): the gauge and the recheck timer are already at rest.
    if (this.queue.length === 0) return;
    for (let head = this.queue.peek(); head !== undefined; head = this.queue.peek()) {
      let decided: unknown;
      try {
        decided = head.item.tryDecide();
      } catch (err) {
        this.queue.shift();
        head.item.settle(undefined, err);
        continue;
      }
      if (decided === undefined) break;
      this.queue.shift();
      head.item.settle(decided);
    }
    this.updateRecheck();
  }

  /** Stops the recheck timer (the router closes; held requests still leave as load drops). */
  close(): void {
    clearInterval(this.recheck);
    this.recheck = undefined;
  }

  private wait(held: Held, res: ServerResponse, bind: (resolver: Held['settle']) => void): Promise<unknown> {
    const startedMs = performance.now();
    this.metrics.flowControlHeld.inc();
    this.updateRecheck();
    return new Promise((resolve, reject) => {
      const onClose = (): void => {
        if (this.queue.remove(held)) reject(new ClientGoneError());
        this.updateRecheck();
      };
      res.once('close', onClose);
      bind((decided, error) => {
        res.off('close', onClose);
        this.metrics.flowControlWaitSeconds.observe((performance.now() - startedMs) / 1000);
        // The error is what the decision threw (a RouterError or a bug's Error), passed on as it was.
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- see the line above
        if (error !== undefined) reject(error);
        else resolve(decided);
      });
    });
  }

  private full(): RouterError {
    const { retryAfterSeconds, maxWaiting } = this.queue.settings;
    return new RouterError(
      'flow_control_full',
      `flow control: ${maxWaiting} requests of lower priority classes already wait at the router; retry after ${retryAfterSeconds} s`,
      { retryAfterSeconds },
    );
  }

  private updateRecheck(): void {
    this.metrics.flowControlWaiting.set(this.queue.length);
    if (this.queue.length === 0) return this.close();
    if (this.recheck !== undefined) return;
    this.recheck = setInterval(() => this.wake(), FLOW_CONTROL_RECHECK_MS);
    this.recheck.unref();
  }
}
