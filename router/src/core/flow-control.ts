/**
 * Flow control by priority class, the router's half of priority serving: vLLM's priority policy reorders only what
 * waits inside an engine; once a batch request is admitted its prefill chunks run ahead of an interactive request
 * in every step. So lower classes wait at the router while their engine's predicted prefill queue is above a bound,
 * and the engine's queue holds at most about that much lower-class prefill ahead of an urgent request.
 *
 * The rule, pure and shared by every caller (the simulator and the live router, server/flow-gate.ts):
 * - a request is *urgent* when it has no priority or a priority ≤ 0 (vLLM's default priority is 0): it is never
 *   held, so traffic without classes routes exactly as without flow control;
 * - a lower-class request (priority > 0) is held while others of its class or a more urgent lower class wait
 *   (order is kept), or when the instance the policy chose for it has more than `queuedPrefillBoundTokens`
 *   predicted prefill queued (the router's own count, InstanceLoad);
 * - held requests leave most urgent first, then oldest, each time load drops, re-decided at that moment;
 * - the queue is bounded: one request beyond `maxWaiting` is refused at once (429 with Retry-After), never dropped.
 * The price: lower classes wait longer, and an engine may run below the bound while the held head's chosen
 * instance is above it (throughput is measured against flow control off in docs/router.md).
 */

import type { FlowControlSettings } from '../common/flow-control-settings';

export {
  FLOW_CONTROL_DEFAULTS,
  FLOW_CONTROL_RANGES,
  type FlowControlMode,
  type FlowControlSettings,
} from '../common/flow-control-settings';

/** Whether flow control may hold a request of this priority (a lower class than vLLM's default 0). */
export function isLowerClass(priority: number | undefined): boolean {
  return priority !== undefined && priority > 0;
}

interface Waiting<T> {
  readonly item: T;
  readonly priority: number;
  readonly order: number;
}

/** What `offer` says to do with a request. */
export type FlowVerdict = 'route' | 'wait' | 'refuse';

/** The router's queue of held lower-class requests, ordered by (priority, arrival). */
export class FlowControlQueue<T> {
  private readonly waiting: Waiting<T>[] = [];
  private arrivals = 0;

  constructor(readonly settings: FlowControlSettings) {}

  get length(): number {
    return this.waiting.length;
  }

  /**
   * A request arrives: `route` (urgent, or nothing of its class or above waits: the caller decides it, subject to
   * `admits`), `wait` (queued here), or `refuse` (the queue is full).
   */
  offer(item: T, priority: number | undefined): FlowVerdict {
    if (!this.mayHold(priority)) return 'route';
    const p = priority as number;
    if (!this.waiting.some((w) => w.priority <= p)) return 'route';
    return this.hold(item, p);
  }

  /**
   * Whether a request of this priority could ever be held: flow control is on and it is a lower class. Any other
   * request is routed at once wherever the policy chooses (`offer` says route, `admits` says yes).
   */
  mayHold(priority: number | undefined): boolean {
    return this.settings.mode !== 'off' && isLowerClass(priority);
  }

  /** The policy chose an instance with `queuedPrefillTokens` for a lower-class request: may it go there now? */
  admits(priority: number | undefined, queuedPrefillTokens: number): boolean {
    return !this.mayHold(priority) || queuedPrefillTokens <= this.settings.queuedPrefillBoundTokens;
  }

  /** Holds a request `admits` turned away (or `offer` queued); `refuse` when the queue is full. */
  hold(item: T, priority: number): FlowVerdict {
    if (this.waiting.length >= this.settings.maxWaiting) return 'refuse';
    const entry = { item, priority, order: this.arrivals++ };
    let i = this.waiting.length;
    while (i > 0 && this.waiting[i - 1].priority > priority) i--;
    this.waiting.splice(i, 0, entry);
    return 'wait';
  }

  /** The most urgent, oldest held request, without removing it. */
  peek(): { readonly item: T; readonly priority: number } | undefined {
    return this.waiting[0];
  }

  /** Removes the head (the caller routed it). */
  shift(): void {
    this.waiting.shift();
  }

  /** Removes a held request wherever it is (its client went away); false when it was not held. */
  remove(item: T): boolean {
    const at = this.waiting.findIndex((w) => w.item === item);
    if (at >= 0) this.waiting.splice(at, 1);
    return at >= 0;
  }
}
