import type { LoadShape } from '../workload/load-shape';
import type { WorkloadRequest } from '../workload/workload-request';

/** What the feed reads of a request: its id, arrival time and dependency. */
export type FeedItem = Pick<WorkloadRequest, 'id' | 'arrivalMs' | 'dependsOnId'>;

/**
 * Decides which workload request is sent next, for the simulator (virtual time) and the live benchmark (wall
 * time) alike. It holds the workload's order and multi-turn dependencies; the caller owns the clock.
 *
 * - Open loop (`open-poisson`, `open-trace`): `nextArrival()` gives requests in arrival order. At its arrival
 *   time the caller calls `release(request)`: it is sendable now unless it depends on a request that has not
 *   completed; then it is parked and comes back from `complete(dependencyId)` at that completion time.
 * - Closed loop: `nextSendable()` gives the earliest request in workload order whose dependency (if any) has
 *   completed; a blocked request keeps its place and goes first once its dependency completes.
 */
export class RequestFeed<R extends FeedItem = WorkloadRequest> {
  private readonly source: Iterator<R>;
  private lookahead: R | undefined;
  private exhausted = false;
  private issued = 0;
  private readonly completed = new Set<string>();
  /** Open loop: requests waiting on a dependency, by dependency id. */
  private readonly parked = new Map<string, R[]>();
  /** Closed loop: requests taken from the source whose dependency was still running, in workload order. */
  private readonly blocked: R[] = [];

  constructor(
    requests: Iterable<R>,
    readonly load: LoadShape,
    /** Stop after this many requests (whatever the workload would still yield). */
    private readonly maxRequests = Infinity,
    /** Closed loop: how many blocked requests may wait before the feed stops looking further ahead. */
    private readonly maxBlocked = 10_000,
  ) {
    this.source = requests[Symbol.iterator]();
  }

  get isOpenLoop(): boolean {
    return this.load.mode !== 'closed';
  }

  /** Requests handed out so far (sendable or parked). */
  get issuedCount(): number {
    return this.issued;
  }

  /** True when no request will come out any more (everything handed out and nothing parked or blocked). */
  get done(): boolean {
    return this.peekSource() === undefined && this.parked.size === 0 && this.blocked.length === 0;
  }

  /** Open loop: whether some request waits on a running one (so a completion can release a send). */
  get hasParked(): boolean {
    return this.parked.size > 0;
  }

  /** Open loop: the next request in arrival order, or undefined when the workload is exhausted. */
  nextArrival(): R | undefined {
    const next = this.takeSource();
    return next;
  }

  /** Open loop: the request's arrival time has come. Returns true if it may be sent now, false if parked. */
  release(request: R): boolean {
    const dep = request.dependsOnId;
    if (dep === undefined || this.completed.has(dep)) return true;
    const waiting = this.parked.get(dep);
    if (waiting) waiting.push(request);
    else this.parked.set(dep, [request]);
    return false;
  }

  /**
   * A request finished (successfully or not: a failed turn must not stall its conversation). Returns the
   * open-loop requests that were parked on it, now sendable.
   */
  complete(id: string): R[] {
    this.completed.add(id);
    const waiting = this.parked.get(id);
    if (waiting === undefined) return [];
    this.parked.delete(id);
    return waiting;
  }

  /** Closed loop: the next sendable request, or undefined when none is sendable now (or ever). */
  nextSendable(): R | undefined {
    for (let i = 0; i < this.blocked.length; i++) {
      const candidate = this.blocked[i];
      if (this.completed.has(candidate.dependsOnId!)) {
        this.blocked.splice(i, 1);
        return candidate;
      }
    }
    while (this.blocked.length < this.maxBlocked) {
      const next = this.takeSource();
      if (next === undefined) return undefined;
      if (next.dependsOnId === undefined || this.completed.has(next.dependsOnId)) return next;
      this.blocked.push(next);
    }
    return undefined;
  }

  private peekSource(): R | undefined {
    if (this.lookahead === undefined && !this.exhausted && this.issued < this.maxRequests) {
      const r = this.source.next();
      if (r.done) this.exhausted = true;
      else this.lookahead = r.value;
    }
    return this.issued < this.maxRequests ? this.lookahead : undefined;
  }

  private takeSource(): R | undefined {
    const next = this.peekSource();
    if (next !== undefined) {
      this.lookahead = undefined;
      this.issued++;
    }
    return next;
  }
}
