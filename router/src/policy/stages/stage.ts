import type { RoutingRequest } from '../../protocol/routing-request';
import type { InstanceView, ReleaseOutcome, RoutingDecision, RoutingSnapshot } from '../routing-policy';

/**
 * The stages a policy is built from, as in llm-d's inference scheduler (filters, weighted scorers, a picker:
 * https://github.com/llm-d/llm-d-inference-scheduler, docs/architecture.md, read 2026-12-06). A policy lists its
 * stages in order (StagedPolicy): filters narrow the candidates, scorers add weighted scores that later pickers
 * read, and the first picker that chooses decides. Every stage is pure in `decide`: it reads the candidates and
 * the decision's facts and never changes them; what a stage remembers is written in its `commit` / `release`.
 */

/** What every stage of one decision reads: the request and the snapshot it is decided on. */
export interface DecisionFacts {
  readonly request: RoutingRequest;
  readonly snapshot: RoutingSnapshot;
}

/**
 * The hooks a stage may have after the decision: what it remembers about a dispatched request, called in the
 * policy's stage order (RoutingPolicy.commit / release).
 */
export interface StageMemory {
  /**
   * The request was dispatched as decided. `snapshot` is the one the policy last decided on (undefined before its
   * first decision): a caller may commit a decision it made itself (tests placing a request).
   */
  commit?(request: RoutingRequest, decision: RoutingDecision, snapshot: RoutingSnapshot | undefined): void;
  /**
   * False when `commit` never reads its `snapshot`: StagedPolicy's direct runs then skip recording each decision's
   * snapshot for it (two stores, a tenth of a 2-instance round-robin decision). Absent: it may read it.
   */
  readonly commitReadsSnapshot?: boolean;
  /** A committed request ended. */
  release?(request: RoutingRequest, decision: RoutingDecision, outcome: ReleaseOutcome): void;
}

/** Narrows the candidates. */
export interface Filter<Candidate, Facts = DecisionFacts> extends StageMemory {
  readonly kind: 'filter';
  readonly name: string;
  /**
   * The candidates that pass, in their order. Returns `candidates` itself when every candidate passes (nothing
   * allocated). Otherwise writes the ones that pass into `scratch` when given (the runner's reused array, which may
   * be `candidates` itself: then it is compacted in place) and returns it, or returns a new array. Never changes
   * `candidates` unless it is `scratch`, so the snapshot's array is never written. May return none: the runner then
   * has no instance. narrowed() is the one loop that does this.
   */
  filter(candidates: readonly Candidate[], facts: Facts, scratch?: Candidate[]): readonly Candidate[];
}

/**
 * The candidates for which `passes(candidate, arg)` holds, as Filter.filter returns them: `candidates` itself when
 * all pass, else written into `scratch` (a new array when absent). `first` is where the caller's own copy-free scan
 * found the first candidate that fails (a filter scans inline, so the all-pass case makes no call per candidate);
 * from there one pass copies. `passes` is a module-level function and `arg` its input: no closure per decision.
 */
export function narrowed<Candidate, Arg>(
  candidates: readonly Candidate[],
  first: number,
  passes: (candidate: Candidate, arg: Arg) => boolean,
  arg: Arg,
  scratch: Candidate[] = [],
): readonly Candidate[] {
  const n = candidates.length;
  if (first >= n) return candidates;
  if (scratch !== candidates) for (let i = 0; i < first; i++) scratch[i] = candidates[i];
  let kept = first;
  for (let i = first + 1; i < n; i++) if (passes(candidates[i], arg)) scratch[kept++] = candidates[i];
  scratch.length = kept;
  return scratch;
}

/**
 * Scores every candidate, higher is better (all at once, as llm-d's scorers do); pickers after it read the weighted
 * sum of every scorer before them.
 */
export interface Scorer<Candidate, Facts = DecisionFacts> extends StageMemory {
  readonly kind: 'scorer';
  readonly name: string;
  /** How much this scorer's score counts in the sum. */
  readonly weight: number;
  /** Writes candidate i's score into `scores[i]` for every candidate (the buffer may be longer; only those are read). */
  score(candidates: readonly Candidate[], facts: Facts, scores: Float64Array): void;
  /**
   * One candidate's score, the value `score` writes for it, for a scorer whose score depends on that candidate
   * alone (it is given no facts): StagedPolicy then scores in the same pass that checks the instance filters (one
   * pass, not two).
   */
  readonly scoreOf?: (candidate: Candidate) => number;
}

/** Chooses one candidate, or leaves the choice to the next picker. */
export interface Picker<Candidate, Reason extends string = string, Facts = DecisionFacts> extends StageMemory {
  readonly kind: 'picker';
  readonly name: string;
  /**
   * The decision, or undefined when this picker does not choose (the next one does). `scores[i]` is candidate
   * i's weighted score from the scorers listed before this picker (empty when there are none). Never called
   * with no candidates.
   */
  pick(candidates: readonly Candidate[], scores: Float64Array, facts: Facts): RoutingDecision<Reason> | undefined;
  /**
   * The decision `pick` would make among the `instances` that `eligible` accepts for `request`, for a picker that
   * usually reads only a few of them (round-robin stops at the first after its cursor): StagedPolicy then skips
   * listing them. Undefined when none is eligible.
   */
  pickEligible?(
    instances: readonly Candidate[],
    eligible: (candidate: Candidate, request: RoutingRequest) => boolean,
    request: RoutingRequest,
  ): RoutingDecision<Reason> | undefined;
  /**
   * The decision `pick` would make, fed one score at a time, for a picker that reads each score once in order
   * (max-score): StagedPolicy then scores and offers in its one pass over the instances instead of writing every
   * score and calling `pick`. `begin` starts a decision; `offer(i, score)` gives candidate i's score, in order, for
   * every candidate that passed the instance filters; `choose` decides from the offers alone (the runner stores no
   * scores), so a candidate never offered is never chosen. A picker with these implements `pick` with them (one
   * home for its rule). Never called with no candidate offered.
   */
  begin?(): void;
  offer?(index: number, score: number): void;
  choose?(candidates: readonly Candidate[]): RoutingDecision<Reason> | undefined;
}

/** One stage of a policy. */
export type Stage<Candidate, Reason extends string = string, Facts = DecisionFacts> =
  Filter<Candidate, Facts> | Scorer<Candidate, Facts> | Picker<Candidate, Reason, Facts>;

/** How a policy definition lists a stage (docs and the registry's tests): its kind, name and, for a scorer, weight. */
export interface StageSummary {
  readonly kind: 'filter' | 'scorer' | 'picker' | 'candidates';
  readonly name: string;
  readonly weight?: number;
}

/** A stage as its definition lists it. */
export function summaryOf(stage: {
  readonly kind: StageSummary['kind'];
  readonly name: string;
  readonly weight?: number;
}): StageSummary {
  return stage.kind === 'scorer'
    ? { kind: stage.kind, name: stage.name, weight: stage.weight }
    : { kind: stage.kind, name: stage.name };
}

/** Turns the instances that passed the instance filters into what the later stages compare (a prediction per instance). */
export interface CandidateStage<Candidate, Facts = DecisionFacts> extends StageMemory {
  readonly kind: 'candidates';
  readonly name: string;
  /** One candidate per instance, in their order; never changes `instances`. */
  candidatesOf(instances: readonly InstanceView[], facts: Facts): readonly Candidate[];
}
