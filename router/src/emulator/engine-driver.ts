/**
 * Runs an engine model against the wall clock: virtual time = (wall time since start) × timeScale. A timer
 * wakes at the next step start or event time, executes every step that has started by now, and hands each
 * event to its request's listener once the wall clock reaches the event's virtual time. When the process is
 * late (a busy event loop, or µs-scale steps at a high time scale), it catches up in one go: events are never
 * dropped or reordered, only delivered late.
 */
import { performance } from 'node:perf_hooks';
import type { EngineEvent, EngineModel, EngineRequestInput, SubmittedRequest } from './engine-model';

export type EventListener = (event: EngineEvent) => void;

export interface EngineDriverOptions {
  /** Virtual milliseconds per wall millisecond (10 = ten times faster than real time). */
  readonly timeScale: number;
  /** Sees every event of every request as it is delivered (metrics). */
  readonly onEvent?: EventListener;
  /** Wall clock in ms (injectable for tests). */
  readonly now?: () => number;
}

export class EngineDriver {
  readonly engine: EngineModel;
  readonly timeScale: number;
  private readonly wallStart: number;
  private readonly now: () => number;
  private readonly onEvent: EventListener | undefined;
  private readonly listeners = new Map<string, EventListener>();
  /** Events produced by executed steps, in time order, not yet due. */
  private pending: EngineEvent[] = [];
  private pendingHead = 0;
  private timer: NodeJS.Timeout | undefined;
  private timerDueMs = Infinity;
  private closed = false;

  constructor(engine: EngineModel, options: EngineDriverOptions) {
    if (!(options.timeScale > 0) || !Number.isFinite(options.timeScale))
      throw new RangeError(`timeScale must be a finite number > 0, got ${options.timeScale}`);
    this.engine = engine;
    this.timeScale = options.timeScale;
    this.now = options.now ?? (() => performance.now());
    this.onEvent = options.onEvent;
    this.wallStart = this.now();
  }

  /** The engine's current virtual time. */
  virtualNowMs(): number {
    return (this.now() - this.wallStart) * this.timeScale;
  }

  /**
   * Submits a request now; `listener` gets its events (admitted, first-token, token, preempted, finished) as
   * they fall due. Throws `EngineRequestError` for requests the engine refuses.
   */
  submit(input: EngineRequestInput, listener: EventListener): SubmittedRequest {
    if (this.closed) throw new Error('engine driver is closed');
    const accepted = this.engine.submit(input, this.virtualNowMs());
    this.listeners.set(input.id, listener);
    this.schedule();
    return accepted;
  }

  /** Cancels a request (client went away): the engine frees its blocks; no more events reach its listener. */
  abort(id: string): void {
    this.listeners.delete(id);
    this.engine.abort(id);
  }

  /** Stops the timer; pending events are dropped. */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.listeners.clear();
    this.pending = [];
    this.pendingHead = 0;
  }

  private tick(): void {
    this.timer = undefined;
    this.timerDueMs = Infinity;
    if (this.closed) return;
    const virtualNow = this.virtualNowMs();
    for (const event of this.engine.runUntil(virtualNow)) this.pending.push(event);
    while (this.pendingHead < this.pending.length && this.pending[this.pendingHead].timeMs <= virtualNow) {
      this.deliver(this.pending[this.pendingHead++]);
    }
    if (this.pendingHead > 1024 && this.pendingHead * 2 > this.pending.length) {
      this.pending = this.pending.slice(this.pendingHead);
      this.pendingHead = 0;
    }
    this.schedule();
  }

  private deliver(event: EngineEvent): void {
    const listener = this.listeners.get(event.id);
    if (event.type === 'finished') this.listeners.delete(event.id);
    this.onEvent?.(event);
    listener?.(event);
  }

  /** Arms the timer for the earliest of: next pending event, next engine step. */
  private schedule(): void {
    if (this.closed) return;
    let due = this.pendingHead < this.pending.length ? this.pending[this.pendingHead].timeMs : Infinity;
    const nextStep = this.engine.nextStepTimeMs();
    if (nextStep !== undefined && nextStep < due) due = nextStep;
    if (due === Infinity || due >= this.timerDueMs) return;
    if (this.timer) clearTimeout(this.timer);
    const wallDelay = Math.max(0, (due - this.virtualNowMs()) / this.timeScale);
    this.timerDueMs = due;
    this.timer = setTimeout(() => this.tick(), wallDelay);
  }
}
