/**
 * The engine's waiting queue under vLLM's two scheduling policies (vllm/v1/core/sched/request_queue.py, commit
 * 9feb38ca): `FCFSRequestQueue` is a deque (new requests at the back, a preempted one `prepend_request`ed to the
 * front); `PriorityRequestQueue` is a heap ordered by `(priority, arrival_time)`, lower first, where
 * `prepend_request` is `add_request` ("there is no concept of prepending to the front").
 *
 * A request reaches vLLM's queue only once it has arrived at the engine; here the engine queues it at submit with
 * the time it becomes eligible (after the request overhead). FCFS needs no more (eligibility follows submit
 * order); under priority a request enters the heap at the first step at or after its eligible time (`promote`),
 * so a later, more urgent arrival cannot be chosen before it has arrived.
 */
import { RequestQueue } from './request-queue';

/** What the queue needs to know of a request. */
export interface QueuedRequest {
  /** Lower is sooner (vLLM's `priority`, default 0). */
  readonly priority: number;
  /** When the client sent it (vLLM's `arrival_time`). */
  readonly submittedMs: number;
  /** Submit order: breaks ties of equal times, so the order is total and the model deterministic. */
  readonly order: number;
  /** When it may be scheduled (submit + request overhead). */
  readonly eligibleMs: number;
}

export interface WaitingQueue<T extends QueuedRequest> extends Iterable<T> {
  readonly length: number;
  /** The request the scheduler considers next; under priority, once `promote`d, the most urgent eligible one. */
  peekFront(): T | undefined;
  popFront(): T | undefined;
  /** A newly submitted request. */
  pushBack(item: T): void;
  /** A preempted request going back to wait (vLLM's `prepend_request`). */
  pushFront(item: T): void;
  remove(item: T): boolean;
  /** Makes every request eligible at `nowMs` a candidate (priority only; FCFS order needs nothing). */
  promote(nowMs: number): void;
  /** When the next not yet promoted request becomes eligible, while another is ahead of it (priority only). */
  nextPromotionMs(): number | undefined;
}

/** vLLM's `FCFSRequestQueue`. */
export class FcfsWaitingQueue<T extends QueuedRequest> extends RequestQueue<T> implements WaitingQueue<T> {
  promote(): void {}

  nextPromotionMs(): undefined {
    return undefined;
  }
}

function before(a: QueuedRequest, b: QueuedRequest): boolean {
  if (a.priority !== b.priority) return a.priority < b.priority;
  if (a.submittedMs !== b.submittedMs) return a.submittedMs < b.submittedMs;
  return a.order < b.order;
}

/** vLLM's `PriorityRequestQueue`: a binary heap on (priority, arrival), fed from the arrivals in submit order. */
export class PriorityWaitingQueue<T extends QueuedRequest> implements WaitingQueue<T> {
  private readonly arrivals = new RequestQueue<T>();
  private readonly heap: T[] = [];

  get length(): number {
    return this.heap.length + this.arrivals.length;
  }

  peekFront(): T | undefined {
    return this.heap.length > 0 ? this.heap[0] : this.arrivals.peekFront();
  }

  popFront(): T | undefined {
    if (this.heap.length === 0) return this.arrivals.popFront();
    const top = this.heap[0];
    const last = this.heap.pop() as T;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      this.siftDown(0);
    }
    return top;
  }

  pushBack(item: T): void {
    this.arrivals.pushBack(item);
  }

  pushFront(item: T): void {
    this.heap.push(item);
    this.siftUp(this.heap.length - 1);
  }

  remove(item: T): boolean {
    if (this.arrivals.remove(item)) return true;
    const i = this.heap.indexOf(item);
    if (i < 0) return false;
    const last = this.heap.pop() as T;
    if (i < this.heap.length) {
      this.heap[i] = last;
      this.siftDown(i);
      this.siftUp(i);
    }
    return true;
  }

  promote(nowMs: number): void {
    for (let head = this.arrivals.peekFront(); head !== undefined && head.eligibleMs <= nowMs;) {
      this.pushFront(this.arrivals.popFront() as T);
      head = this.arrivals.peekFront();
    }
  }

  nextPromotionMs(): number | undefined {
    return this.heap.length > 0 ? this.arrivals.peekFront()?.eligibleMs : undefined;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    yield* this.heap;
    yield* this.arrivals;
  }

  private siftUp(index: number): void {
    const heap = this.heap;
    let i = index;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i], heap[parent])) break;
      [heap[i], heap[parent]] = [heap[parent], heap[i]];
      i = parent;
    }
  }

  private siftDown(index: number): void {
    const heap = this.heap;
    let i = index;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let first = i;
      if (left < heap.length && before(heap[left], heap[first])) first = left;
      if (right < heap.length && before(heap[right], heap[first])) first = right;
      if (first === i) return;
      [heap[i], heap[first]] = [heap[first], heap[i]];
      i = first;
    }
  }
}
