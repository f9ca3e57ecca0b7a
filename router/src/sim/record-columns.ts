import type { RequestRecord } from '../report/request-record';

const FINISHED = 0;
const REJECTED = 1;
/** Index of an absent string (a decision without a reason). */
const NO_STRING = -1;

/**
 * The simulator's request records while it runs, in columns: typed arrays for the numbers, interned indexes
 * for the few distinct strings, and the ids. As objects, an hour of a large fleet's records (345,568 at 112
 * instances, each a record and its boxed numbers) is what every full garbage collection marks, and the heap
 * grows with them; as columns they are a handful of objects, and a full collection costs the same at the end of
 * the run as at its start. `toRecords` builds the objects once, for the report, in the order they were pushed,
 * with the same keys in the same order as the simulator wrote them before.
 */
export class RecordColumns {
  private count = 0;
  private capacity = 0;
  private readonly ids: string[] = [];
  private kind = new Uint8Array(0);
  private instance = new Int32Array(0);
  private reason = new Int32Array(0);
  private error = new Int32Array(0);
  private errorDetail = new Int32Array(0);
  private sentAtMs = new Float64Array(0);
  private ttftMs = new Float64Array(0);
  private e2eMs = new Float64Array(0);
  private promptTokens = new Float64Array(0);
  private cachedPromptTokens = new Float64Array(0);
  private outputTokens = new Float64Array(0);
  private decisionMicros = new Float64Array(0);
  /** NaN when the policy predicted nothing (the record then has no `predictedCachedTokens`). */
  private predictedCachedTokens = new Float64Array(0);
  /** NaN when the request had no priority class. */
  private priority = new Float64Array(0);
  private readonly strings: string[] = [];
  private readonly stringIndex = new Map<string, number>();

  constructor(private readonly instanceIds: readonly string[]) {}

  get length(): number {
    return this.count;
  }

  /** A request the engine served. */
  pushFinished(
    id: string,
    instance: number,
    sentAtMs: number,
    ttftMs: number,
    e2eMs: number,
    promptTokens: number,
    cachedPromptTokens: number,
    outputTokens: number,
    decisionMicros: number,
    reason: string | undefined,
    predictedCachedTokens: number | undefined,
    priority?: number,
  ): void {
    const i = this.next(id, FINISHED, instance, sentAtMs, e2eMs, decisionMicros, reason, predictedCachedTokens);
    this.priority[i] = priority ?? NaN;
    this.ttftMs[i] = ttftMs;
    this.promptTokens[i] = promptTokens;
    this.cachedPromptTokens[i] = cachedPromptTokens;
    this.outputTokens[i] = outputTokens;
  }

  /** A request the engine refused (the record has no first token, no usage and an error code). */
  pushRejected(
    id: string,
    instance: number,
    sentAtMs: number,
    e2eMs: number,
    decisionMicros: number,
    reason: string | undefined,
    predictedCachedTokens: number | undefined,
    error: string,
    errorDetail: string,
    priority?: number,
  ): void {
    const i = this.next(id, REJECTED, instance, sentAtMs, e2eMs, decisionMicros, reason, predictedCachedTokens);
    this.priority[i] = priority ?? NaN;
    this.error[i] = this.intern(error);
    this.errorDetail[i] = this.intern(errorDetail);
  }

  /** The records as objects, in push order. */
  toRecords(): RequestRecord[] {
    const records = new Array<RequestRecord>(this.count);
    for (let i = 0; i < this.count; i++) {
      const record = this.kind[i] === REJECTED ? this.rejectedRecord(i) : this.finishedRecord(i);
      // Last, and only on classed requests, so records without a class keep their shape.
      records[i] = Number.isNaN(this.priority[i]) ? record : { ...record, priority: this.priority[i] };
    }
    return records;
  }

  // Plain literals with every key written out, so each kind of record gets one compact shape.
  private finishedRecord(i: number): RequestRecord {
    const predicted = this.predictedCachedTokens[i];
    const record: { -readonly [K in keyof RequestRecord]: RequestRecord[K] } = {
      id: this.ids[i],
      instance: this.instanceIds[this.instance[i]],
      sentAtMs: this.sentAtMs[i],
      ttftMs: this.ttftMs[i],
      e2eMs: this.e2eMs[i],
      promptTokens: this.promptTokens[i],
      cachedPromptTokens: this.cachedPromptTokens[i],
      outputTokens: this.outputTokens[i],
      decisionMicros: this.decisionMicros[i],
      reason: this.reasonAt(i),
    };
    // Last, as the simulator wrote it: the key order is part of the report's JSON.
    if (!Number.isNaN(predicted)) record.predictedCachedTokens = predicted;
    return record;
  }

  private rejectedRecord(i: number): RequestRecord {
    const predicted = this.predictedCachedTokens[i];
    const reason = this.reasonAt(i);
    const id = this.ids[i];
    // -1: refused at the router before any instance was chosen (flow control's 429).
    const instance = this.instance[i] < 0 ? null : this.instanceIds[this.instance[i]];
    const error = this.strings[this.error[i]];
    const errorDetail = this.strings[this.errorDetail[i]];
    if (Number.isNaN(predicted)) {
      return {
        id,
        instance,
        sentAtMs: this.sentAtMs[i],
        ttftMs: null,
        e2eMs: this.e2eMs[i],
        decisionMicros: this.decisionMicros[i],
        reason,
        error,
        errorDetail,
      };
    }
    return {
      id,
      instance,
      sentAtMs: this.sentAtMs[i],
      ttftMs: null,
      e2eMs: this.e2eMs[i],
      decisionMicros: this.decisionMicros[i],
      reason,
      predictedCachedTokens: predicted,
      error,
      errorDetail,
    };
  }

  private reasonAt(i: number): string | undefined {
    return this.reason[i] === NO_STRING ? undefined : this.strings[this.reason[i]];
  }

  private next(
    id: string,
    kind: number,
    instance: number,
    sentAtMs: number,
    e2eMs: number,
    decisionMicros: number,
    reason: string | undefined,
    predictedCachedTokens: number | undefined,
  ): number {
    if (this.count === this.capacity) this.grow();
    const i = this.count++;
    this.ids.push(id);
    this.kind[i] = kind;
    this.instance[i] = instance;
    this.sentAtMs[i] = sentAtMs;
    this.e2eMs[i] = e2eMs;
    this.decisionMicros[i] = decisionMicros;
    this.reason[i] = reason === undefined ? NO_STRING : this.intern(reason);
    this.predictedCachedTokens[i] = predictedCachedTokens ?? NaN;
    return i;
  }

  private intern(value: string): number {
    let index = this.stringIndex.get(value);
    if (index === undefined) {
      index = this.strings.length;
      this.strings.push(value);
      this.stringIndex.set(value, index);
    }
    return index;
  }

  private grow(): void {
    const capacity = Math.max(1024, this.capacity * 2);
    const grown = <T extends Uint8Array | Int32Array | Float64Array>(old: T, make: (n: number) => T): T => {
      const array = make(capacity);
      array.set(old);
      return array;
    };
    this.kind = grown(this.kind, (n) => new Uint8Array(n));
    this.instance = grown(this.instance, (n) => new Int32Array(n));
    this.reason = grown(this.reason, (n) => new Int32Array(n));
    this.error = grown(this.error, (n) => new Int32Array(n));
    this.errorDetail = grown(this.errorDetail, (n) => new Int32Array(n));
    this.sentAtMs = grown(this.sentAtMs, (n) => new Float64Array(n));
    this.ttftMs = grown(this.ttftMs, (n) => new Float64Array(n));
    this.e2eMs = grown(this.e2eMs, (n) => new Float64Array(n));
    this.promptTokens = grown(this.promptTokens, (n) => new Float64Array(n));
    this.cachedPromptTokens = grown(this.cachedPromptTokens, (n) => new Float64Array(n));
    this.outputTokens = grown(this.outputTokens, (n) => new Float64Array(n));
    this.decisionMicros = grown(this.decisionMicros, (n) => new Float64Array(n));
    this.predictedCachedTokens = grown(this.predictedCachedTokens, (n) => new Float64Array(n));
    this.priority = grown(this.priority, (n) => new Float64Array(n));
    this.capacity = capacity;
  }
}
