import type { RoutingRequest } from '../../protocol/routing-request';
import {
  NoHealthyInstanceError,
  type InstanceView,
  type ReleaseOutcome,
  type RoutingDecision,
  type RoutingPolicy,
  type RoutingSnapshot,
} from '../routing-policy';
import { servesModel } from '../served-models';
import { HEALTHY_FILTER } from './healthy-filter';
import { SERVES_MODEL_FILTER } from './serves-model-filter';
import {
  summaryOf,
  type CandidateStage,
  type DecisionFacts,
  type Filter,
  type Picker,
  type Scorer,
  type Stage,
  type StageMemory,
  type StageSummary,
} from './stage';

/** What a staged policy is built from, in the order its stages run. */
export interface StagePlan<Candidate, Reason extends string, Facts extends DecisionFacts> {
  /**
   * The facts every stage of one decision reads, computed once per decision. Absent: the stages read only the
   * request and the snapshot (`Facts` is DecisionFacts), and the runner passes them without allocating.
   */
  readonly factsOf?: (request: RoutingRequest, snapshot: RoutingSnapshot) => Facts;
  /** Which instances may take the request (the model they serve, their health). */
  readonly instanceFilters: readonly Filter<InstanceView, Facts>[];
  /** What the later stages compare about each instance that passed. */
  readonly candidates: CandidateStage<Candidate, Facts>;
  /** Filters, scorers and pickers over the candidates, in order: the first picker that chooses decides. */
  readonly stages: readonly Stage<Candidate, Reason, Facts>[];
}

/** The candidate stage of a policy whose stages compare the instances themselves. */
export const INSTANCES_AS_CANDIDATES: CandidateStage<InstanceView> = {
  kind: 'candidates',
  name: 'instances',
  candidatesOf: (instances) => instances,
};

const NO_SCORES = new Float64Array(0);

/** True when every instance is healthy and serves `model`: the standard instance filters would pass them all. */
function allServeAndHealthy(instances: readonly InstanceView[], model: string): boolean {
  for (let i = 0; i < instances.length; i++) {
    const instance = instances[i];
    if (!instance.healthy || !servesModel(instance, model)) return false;
  }
  return true;
}

/** True when the standard instance filters pass `instance` for the request (a picker's `pickEligible` asks). */
function servesAndHealthy(instance: InstanceView, facts: DecisionFacts): boolean {
  return instance.healthy && servesModel(instance, facts.request.model);
}

/**
 * allServeAndHealthy, writing each instance's score (`scoreOf`) in the same pass. When it returns false it stopped
 * at the first instance the filters drop, so the scores are incomplete: the caller filters, then scores again.
 */
function scoredAllServeAndHealthy<Facts>(
  instances: readonly InstanceView[],
  model: string,
  scoreOf: (candidate: InstanceView, facts: Facts) => number,
  facts: Facts,
  scores: Float64Array,
): boolean {
  for (let i = 0; i < instances.length; i++) {
    const instance = instances[i];
    if (!instance.healthy || !servesModel(instance, model)) return false;
    scores[i] = scoreOf(instance, facts);
  }
  return true;
}

/**
 * A plan decide() may run without its general loop: the standard instance filters (serves-model, then healthy),
 * the instances themselves as candidates, no per-decision facts, and at most one scorer before one picker
 * (least-outstanding-requests, random, round-robin). Undefined for any other plan.
 */
interface DirectPlan<Reason extends string> {
  readonly scorer: Scorer<InstanceView, DecisionFacts> | undefined;
  readonly picker: Picker<InstanceView, Reason, DecisionFacts>;
}

function directPlanOf<Candidate, Reason extends string, Facts extends DecisionFacts>(
  plan: StagePlan<Candidate, Reason, Facts>,
): DirectPlan<Reason> | undefined {
  const filters = plan.instanceFilters;
  const standard =
    plan.factsOf === undefined &&
    (plan.candidates as CandidateStage<unknown>) === INSTANCES_AS_CANDIDATES &&
    filters.length === 2 &&
    (filters[0] as Filter<InstanceView>) === SERVES_MODEL_FILTER &&
    (filters[1] as Filter<InstanceView>) === HEALTHY_FILTER;
  if (!standard) return undefined;
  // With the instances as candidates and no factsOf, Candidate is InstanceView and Facts DecisionFacts.
  const stages = plan.stages as readonly Stage<InstanceView, Reason, DecisionFacts>[];
  const [first, second] = stages;
  if (stages.length === 1 && first.kind === 'picker') return { scorer: undefined, picker: first };
  if (stages.length === 2 && first.kind === 'scorer' && second.kind === 'picker')
    return { scorer: first, picker: second };
  return undefined;
}

/**
 * The runner of a policy built from stages (stage.ts): `decide` runs the instance filters, builds the
 * candidates, then runs the stages in order; `commit` and `release` call each stage's hook in the same order.
 * Throws NoHealthyInstanceError when a filter leaves no candidate. The `decide` / `commit` / `release` contract
 * of RoutingPolicy is unchanged: only the commit hooks write what a stage remembers.
 */
export class StagedPolicy<
  Candidate,
  Reason extends string,
  Facts extends DecisionFacts = DecisionFacts,
> implements RoutingPolicy {
  /** The stages in order, as the policy's definition lists them. */
  readonly stages: readonly StageSummary[];
  private readonly memories: readonly StageMemory[];
  /** The plan when decide() may take the direct path (directPlanOf), else undefined. */
  private readonly direct: DirectPlan<Reason> | undefined;
  private sums: Float64Array = new Float64Array(8);
  private raw: Float64Array = new Float64Array(8);
  private lastSnapshot: RoutingSnapshot | undefined;
  /** The filters' reused output (Filter.filter's `scratch`): one for instances, one for candidates. */
  private readonly instanceScratch: InstanceView[] = [];
  private readonly candidateScratch: Candidate[] = [];
  /** The facts of a plan without `factsOf`, refilled for each decision (stages only read them, during it). */
  private readonly plainFacts: { request: RoutingRequest | undefined; snapshot: RoutingSnapshot | undefined } = {
    request: undefined,
    snapshot: undefined,
  };

  constructor(
    readonly name: string,
    private readonly plan: StagePlan<Candidate, Reason, Facts>,
  ) {
    const all = [...plan.instanceFilters, plan.candidates, ...plan.stages];
    this.stages = all.filter((s) => s !== INSTANCES_AS_CANDIDATES).map(summaryOf);
    this.memories = all.filter((s) => s.commit !== undefined || s.release !== undefined);
    this.direct = directPlanOf(plan);
  }

  decide(request: RoutingRequest, snapshot: RoutingSnapshot): RoutingDecision<Reason> {
    this.lastSnapshot = snapshot;
    if (this.direct !== undefined) return this.decideDirect(request, snapshot, this.direct);
    const plan = this.plan;
    const facts = plan.factsOf === undefined ? this.plainFactsOf(request, snapshot) : plan.factsOf(request, snapshot);
    let instances = snapshot.instances;
    for (let i = 0; i < plan.instanceFilters.length; i++)
      instances = plan.instanceFilters[i].filter(instances, facts, this.instanceScratch);
    if (instances.length === 0) throw new NoHealthyInstanceError();
    let candidates = plan.candidates.candidatesOf(instances, facts);
    let scorers = 0;
    let scores: Float64Array = NO_SCORES;
    for (let i = 0; i < plan.stages.length; i++) {
      const stage = plan.stages[i];
      if (stage.kind === 'filter') {
        candidates = stage.filter(candidates, facts, this.candidateScratch);
        if (candidates.length === 0) throw new NoHealthyInstanceError();
      } else if (stage.kind === 'scorer') {
        scorers++;
      } else {
        if (scorers > 0) scores = this.scoresOf(candidates, facts, i);
        const decision = stage.pick(candidates, scores, facts);
        if (decision !== undefined) return decision;
      }
    }
    throw new Error(`policy ${this.name}: no picker chose among ${candidates.length} candidates`);
  }

  /**
   * The same stages in the same order for a DirectPlan, without the general loop: when every instance passes the
   * standard filters (the usual case) one inline check replaces their two calls, and a scorer with `scoreOf`
   * scores in that same pass; the lone scorer writes straight into the sums; a lone picker with `pickEligible`
   * reads only the instances it needs. The stage-by-stage loop costs a trivial policy more than its own rule
   * (issue 37).
   */
  private decideDirect(
    request: RoutingRequest,
    snapshot: RoutingSnapshot,
    direct: DirectPlan<Reason>,
  ): RoutingDecision<Reason> {
    const facts = this.plainFactsOf(request, snapshot) as DecisionFacts;
    const scorer = direct.scorer;
    if (scorer === undefined && direct.picker.pickEligible !== undefined) {
      const decision = direct.picker.pickEligible(snapshot.instances, servesAndHealthy, facts);
      if (decision === undefined) throw new NoHealthyInstanceError();
      return decision;
    }
    let candidates = snapshot.instances;
    let scores: Float64Array = NO_SCORES;
    if (scorer !== undefined && this.sums.length < candidates.length)
      this.sums = new Float64Array(candidates.length * 2);
    if (scorer !== undefined) scores = this.sums;
    const scoreOf = scorer?.scoreOf;
    const allPass =
      scoreOf === undefined
        ? allServeAndHealthy(candidates, request.model)
        : scoredAllServeAndHealthy(candidates, request.model, scoreOf, facts, scores);
    if (!allPass) {
      const scratch = this.instanceScratch;
      candidates = HEALTHY_FILTER.filter(SERVES_MODEL_FILTER.filter(candidates, facts, scratch), facts, scratch);
    }
    if (candidates.length === 0) throw new NoHealthyInstanceError();
    if (scorer !== undefined) {
      if (!allPass || scoreOf === undefined) scorer.score(candidates, facts, scores);
      const w = scorer.weight;
      if (w !== 1) for (let c = 0; c < candidates.length; c++) scores[c] *= w;
    }
    const decision = direct.picker.pick(candidates, scores, facts);
    if (decision === undefined)
      throw new Error(`policy ${this.name}: no picker chose among ${candidates.length} candidates`);
    return decision;
  }

  private plainFactsOf(request: RoutingRequest, snapshot: RoutingSnapshot): Facts {
    this.plainFacts.request = request;
    this.plainFacts.snapshot = snapshot;
    return this.plainFacts as Facts; // a plan without factsOf has Facts = DecisionFacts
  }

  /** The weighted sum of the scorers listed before stage `end`, per candidate (in reused buffers). */
  private scoresOf(candidates: readonly Candidate[], facts: Facts, end: number): Float64Array {
    const n = candidates.length;
    if (this.sums.length < n) {
      this.sums = new Float64Array(n * 2);
      this.raw = new Float64Array(n * 2);
    }
    const sums = this.sums;
    const raw = this.raw;
    let first = true;
    for (let s = 0; s < end; s++) {
      const stage = this.plan.stages[s];
      if (stage.kind !== 'scorer') continue;
      // The first scorer writes straight into the sums: a policy with one scorer makes one pass.
      stage.score(candidates, facts, first ? sums : raw);
      const w = stage.weight;
      if (first && w !== 1) for (let c = 0; c < n; c++) sums[c] *= w;
      else if (!first) for (let c = 0; c < n; c++) sums[c] += w * raw[c];
      first = false;
    }
    return sums;
  }

  commit(request: RoutingRequest, decision: RoutingDecision): void {
    const memories = this.memories;
    for (let i = 0; i < memories.length; i++) memories[i].commit?.(request, decision, this.lastSnapshot);
  }

  release(request: RoutingRequest, decision: RoutingDecision, outcome: ReleaseOutcome): void {
    const memories = this.memories;
    for (let i = 0; i < memories.length; i++) memories[i].release?.(request, decision, outcome);
  }
}
