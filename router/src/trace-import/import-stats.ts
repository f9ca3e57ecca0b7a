import { CeilingTracker, type Ceilings } from '../report/ceilings';
import type { CaptureFormat } from './capture-formats';
import type { OutputSource, ProblemKind, RequestShape } from './captured-request';
import type { TraceEntry } from './trace-entry';

export interface ImportProblem {
  readonly source: string;
  readonly lineNumber: number;
  readonly kind: ProblemKind;
  readonly message: string;
}

export interface SharedPrefix {
  /** Requests whose prompt starts with it. */
  readonly requests: number;
  readonly blocks: number;
  readonly tokens: number;
}

/** Problems kept for the listing (all are counted). */
export const LISTED_PROBLEMS = 1000;

export class ImportFailed extends Error {
  constructor(
    message: string,
    readonly problems: readonly ImportProblem[],
  ) {
    super(message);
    this.name = 'ImportFailed';
  }
}

/** What the import counted: the numbers of the summary, without the file, fleet or notes around them. */
export interface ImportCounts {
  readonly linesRead: number;
  readonly requests: number;
  readonly formats: Readonly<Record<CaptureFormat, number>>;
  readonly promptTokens: {
    readonly total: number;
    readonly mean: number;
    readonly p50: number;
    readonly p90: number;
    readonly p99: number;
    readonly max: number;
  };
  readonly outputTokens: {
    readonly total: number;
    readonly mean: number;
    readonly sources: Readonly<Record<OutputSource, number>>;
  };
  readonly kinds: Readonly<Record<RequestShape['kind'], number>>;
  readonly tenants: number;
  readonly distinctFirstBlocks: number;
  readonly distinctBlocks: number;
  readonly ceilings: Ceilings;
  readonly sharedPrefixes: readonly SharedPrefix[];
  readonly problemCounts: Readonly<Partial<Record<ProblemKind, number>>>;
  /** The first LISTED_PROBLEMS problems, in input order. */
  readonly problems: readonly ImportProblem[];
  readonly problemTotal: number;
}

export interface ImportStatsOptions {
  /** Tokens per hash id. */
  readonly blockTokens: number;
  /** The fleet's KV cache in hash-id blocks, for the fleet ceiling. */
  readonly fleetCapacityBlocks: number;
  /** Fail on the first problem instead of counting it. */
  readonly strict: boolean;
}

/** Shared prefixes listed in the summary. */
const LISTED_SHARED_PREFIXES = 5;

/**
 * The import's accumulator: every line read, every entry accepted, every entry written (in trace order, for the
 * ceilings), every block first seen, every problem. Memory grows with distinct blocks and requests (a few
 * integers each), never with prompt text.
 */
export class ImportStats {
  private readonly ceilings: CeilingTracker;
  // Per distinct block (ids are dense): requests containing it, its parent block, its depth.
  private readonly blockRequests = new IntColumn();
  private readonly blockParent = new IntColumn();
  private readonly blockDepth = new IntColumn();
  private readonly promptLengths = new IntColumn();
  private readonly tenants = new Set<string>();
  private readonly problems: ImportProblem[] = [];
  private readonly problemCounts: Partial<Record<ProblemKind, number>> = {};
  private readonly formats: Record<CaptureFormat, number> = { datacapture: 0, openai: 0 };
  private readonly kinds: Record<RequestShape['kind'], number> = { chat: 0, completions: 0, native: 0, text: 0 };
  private readonly outputSources: Record<OutputSource, number> = {
    usage: 0,
    'generated-text': 0,
    'max-tokens': 0,
    default: 0,
  };
  private distinctFirstBlocks = 0;
  private distinctBlocks = 0;
  private problemTotal = 0;
  private linesRead = 0;
  private requests = 0;
  private promptTotal = 0;
  private outputTotal = 0;

  constructor(private readonly options: ImportStatsOptions) {
    this.ceilings = new CeilingTracker({
      blockTokens: options.blockTokens,
      fleetCapacityBlocks: options.fleetCapacityBlocks,
    });
  }

  get requestsWritten(): number {
    return this.requests;
  }

  get problemsCounted(): number {
    return this.problemTotal;
  }

  get lines(): number {
    return this.linesRead;
  }

  /** The first LISTED_PROBLEMS problems, in input order. */
  get listedProblems(): readonly ImportProblem[] {
    return this.problems;
  }

  /** A line that is not blank was read. */
  lineRead(): void {
    this.linesRead++;
  }

  /** A block of an accepted or rejected prompt (ids are dense: a new id is the next one). */
  readonly onBlock = (id: number, parent: number, isNew: boolean): void => {
    if (isNew) {
      this.blockRequests.ensure(id + 1);
      this.blockParent.ensure(id + 1);
      this.blockDepth.ensure(id + 1);
      this.blockParent.data[id] = parent;
      this.blockDepth.data[id] = parent < 0 ? 1 : this.blockDepth.data[parent] + 1;
      if (parent < 0) this.distinctFirstBlocks++;
      this.distinctBlocks = Math.max(this.distinctBlocks, id + 1);
    }
    this.blockRequests.data[id] = this.blockRequests.data[id] + 1;
  };

  /** An entry accepted from its line (counted before it is put in order). */
  accepted(entry: TraceEntry): void {
    this.formats[entry.format]++;
    this.kinds[entry.kind]++;
    this.outputSources[entry.outputSource]++;
    if (entry.tenantKey !== undefined) this.tenants.add(entry.tenantKey);
    this.promptTotal += entry.inputTokens;
    this.outputTotal += entry.outputTokens;
    this.promptLengths.push(entry.inputTokens);
  }

  /** An entry written to the trace, in trace order: the ceilings see the full blocks of its prompt. */
  written(entry: Pick<TraceEntry, 'inputTokens' | 'ids'>): void {
    const full = Math.floor(entry.inputTokens / this.options.blockTokens);
    this.ceilings.observeBlocks(full === entry.ids.length ? entry.ids : entry.ids.slice(0, full), entry.inputTokens);
    this.requests++;
  }

  /** A line or source that could not be used; with `strict`, the import stops here. */
  problem(source: string, lineNumber: number, kind: ProblemKind, message: string): void {
    const found = { source, lineNumber, kind, message };
    if (this.options.strict)
      throw new ImportFailed(`${source}:${lineNumber}: ${message} (--strict stops at the first bad line)`, [found]);
    this.problemCounts[kind] = (this.problemCounts[kind] ?? 0) + 1;
    this.problemTotal++;
    if (this.problems.length < LISTED_PROBLEMS) this.problems.push(found);
  }

  /** The counts so far (call once the trace is written: the percentiles sort every prompt length). */
  counts(): ImportCounts {
    const sortedLengths = this.promptLengths.data.slice(0, this.promptLengths.length).sort();
    const requests = this.requests;
    return {
      linesRead: this.linesRead,
      requests,
      formats: this.formats,
      promptTokens: {
        total: this.promptTotal,
        mean: this.promptTotal / requests,
        p50: percentile(sortedLengths, 0.5),
        p90: percentile(sortedLengths, 0.9),
        p99: percentile(sortedLengths, 0.99),
        max: sortedLengths[sortedLengths.length - 1],
      },
      outputTokens: { total: this.outputTotal, mean: this.outputTotal / requests, sources: this.outputSources },
      kinds: this.kinds,
      tenants: this.tenants.size,
      distinctFirstBlocks: this.distinctFirstBlocks,
      distinctBlocks: this.distinctBlocks,
      ceilings: this.ceilings.result(),
      sharedPrefixes: this.topSharedPrefixes(LISTED_SHARED_PREFIXES),
      problemCounts: this.problemCounts,
      problems: this.problems,
      problemTotal: this.problemTotal,
    };
  }

  /**
   * The shared prefixes worth the most cache: a block shared by several requests whose every child is shared by
   * fewer (a maximal prefix for that many requests), ranked by the tokens a cache could serve from it,
   * (requests − 1) × its length.
   */
  private topSharedPrefixes(limit: number): SharedPrefix[] {
    const requests = this.blockRequests.data;
    const parent = this.blockParent.data;
    const depth = this.blockDepth.data;
    const distinct = this.distinctBlocks;
    const extended = new Uint8Array(distinct);
    for (let id = 0; id < distinct; id++) {
      const p = parent[id];
      if (p >= 0 && requests[id] === requests[p]) extended[p] = 1;
    }
    const best: { id: number; score: number }[] = [];
    for (let id = 0; id < distinct; id++) {
      const n = requests[id];
      if (n < 2 || extended[id]) continue;
      const score = (n - 1) * depth[id];
      if (best.length < limit || score > best[best.length - 1].score) {
        best.push({ id, score });
        best.sort((a, b) => b.score - a.score || a.id - b.id);
        if (best.length > limit) best.pop();
      }
    }
    return best.map(({ id }) => ({
      requests: requests[id],
      blocks: depth[id],
      tokens: depth[id] * this.options.blockTokens,
    }));
  }
}

/** A growable Int32Array (per distinct block, per request). */
class IntColumn {
  data = new Int32Array(1 << 16);
  length = 0;

  push(v: number): void {
    if (this.length === this.data.length) this.grow();
    this.data[this.length++] = v;
  }

  ensure(n: number): void {
    while (this.data.length < n) this.grow();
    if (this.length < n) this.length = n;
  }

  private grow(): void {
    const next = new Int32Array(this.data.length * 2);
    next.set(this.data);
    this.data = next;
  }
}

function percentile(sorted: Int32Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}
