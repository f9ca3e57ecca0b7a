import type { RoutingRequest } from '../../protocol/routing-request';
import {
  NoHealthyInstanceError,
  type InstanceView,
  type ReleaseOutcome,
  type RoutingDecision,
  type RoutingPolicy,
  type RoutingSnapshot,
} from '../routing-policy';
import { directRunOf, LastDecision, type DirectRun } from './direct-run';
import { HEALTHY_FILTER } from './healthy-filter';
import { SERVES_MODEL_FILTER } from './serves-model-filter';
import {
  summaryOf,
  type CandidateStage,
  type DecisionFacts,
  type Filter,
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

/**
 * The direct run (direct-run.ts) of a plan that is the standard instance filters (serves-model, then healthy), the
 * instances themselves as candidates and no per-decision facts; undefined for any other plan.
 */
function directRunFor<Candidate, Reason extends string, Facts extends DecisionFacts>(
  name: string,
  plan: StagePlan<Candidate, Reason, Facts>,
  last: LastDecision,
  commitsReadLast: boolean,
): DirectRun<Reason> | undefined {
  const filters = plan.instanceFilters;
  const standard =
    plan.factsOf === undefined &&
    (plan.candidates as CandidateStage<unknown>) === INSTANCES_AS_CANDIDATES &&
    filters.length === 2 &&
    (filters[0] as Filter<InstanceView>) === SERVES_MODEL_FILTER &&
    (filters[1] as Filter<InstanceView>) === HEALTHY_FILTER;
  // With the instances as candidates and no factsOf, Candidate is InstanceView and Facts DecisionFacts.
  const stages = plan.stages as readonly Stage<InstanceView, Reason, DecisionFacts>[];
  return standard ? directRunOf(name, stages, last, commitsReadLast) : undefined;
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
  /** The stages with a commit hook, and those with a release hook, in stage order. */
  private readonly commits: readonly Required<Pick<StageMemory, 'commit'>>[];
  /**
   * The commit hook when exactly one stage has one (round-robin's cursor), called without walking `commits`
   * (issue 37: the walk measured about 1.5 ns of a 2-instance round-robin decision).
   */
  private readonly soleCommit: Required<Pick<StageMemory, 'commit'>> | undefined;
  private readonly releases: readonly Required<Pick<StageMemory, 'release'>>[];
  /** How decide() runs the plan without the general loop (directRunFor), when it may. */
  private readonly direct: DirectRun<Reason> | undefined;
  private sums: Float64Array = new Float64Array(8);
  private raw: Float64Array = new Float64Array(8);
  /** The filters' reused output (Filter.filter's `scratch`): one for instances, one for candidates. */
  private readonly instanceScratch: InstanceView[] = [];
  private readonly candidateScratch: Candidate[] = [];
  /** The last decision's request and snapshot: a plan without `factsOf` reads them as its facts. */
  private readonly last = new LastDecision();

  constructor(
    readonly name: string,
    private readonly plan: StagePlan<Candidate, Reason, Facts>,
  ) {
    const all = [...plan.instanceFilters, plan.candidates, ...plan.stages];
    this.stages = all.filter((s) => s !== INSTANCES_AS_CANDIDATES).map(summaryOf);
    this.commits = all.filter((s) => s.commit !== undefined) as Required<Pick<StageMemory, 'commit'>>[];
    this.soleCommit = this.commits.length === 1 ? this.commits[0] : undefined;
    this.releases = all.filter((s) => s.release !== undefined) as Required<Pick<StageMemory, 'release'>>[];
    const commitsReadLast = all.some((s) => s.commit !== undefined && s.commitReadsSnapshot !== false);
    this.direct = directRunFor(name, plan, this.last, commitsReadLast);
  }

  decide(request: RoutingRequest, snapshot: RoutingSnapshot): RoutingDecision<Reason> {
    const direct = this.direct; // it records the request and snapshot in `last`, as decideByStages does
    return direct !== undefined ? direct.decide(request, snapshot) : this.decideByStages(request, snapshot);
  }

  /** The general loop: every filter, the candidates, then each stage in order. */
  private decideByStages(request: RoutingRequest, snapshot: RoutingSnapshot): RoutingDecision<Reason> {
    const plan = this.plan;
    const last = this.last;
    last.request = request;
    last.snapshot = snapshot;
    const facts = plan.factsOf === undefined ? (last.facts as Facts) : plan.factsOf(request, snapshot);
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
    const sole = this.soleCommit;
    if (sole !== undefined) return sole.commit(request, decision, this.last.snapshot);
    const commits = this.commits;
    for (let i = 0; i < commits.length; i++) commits[i].commit(request, decision, this.last.snapshot);
  }

  release(request: RoutingRequest, decision: RoutingDecision, outcome: ReleaseOutcome): void {
    const releases = this.releases;
    for (let i = 0; i < releases.length; i++) releases[i].release(request, decision, outcome);
  }
}

/** Throws when a stage of `plan` has a `hook` (a commit or release hook), naming the stage and `instead`. */
function refuseHook<Candidate, Reason extends string, Facts extends DecisionFacts>(
  name: string,
  plan: StagePlan<Candidate, Reason, Facts>,
  hook: 'commit' | 'release',
  instead: string,
): void {
  const hooked = [...plan.instanceFilters, plan.candidates, ...plan.stages].find((s) => s[hook] !== undefined);
  if (hooked !== undefined) throw new Error(`policy ${name}: stage ${hooked.name} has a ${hook} hook: use ${instead}`);
}

/**
 * A staged policy whose stages never learn from an outcome (none has a release hook: round-robin): its `release`
 * does nothing instead of walking an empty hook list on every request (issue 37: about 0.7 ns of a 2-instance
 * round-robin decision). Throws when a stage has a release hook, so one that starts learning cannot be skipped.
 */
export class OutcomeBlindStagedPolicy<
  Candidate,
  Reason extends string,
  Facts extends DecisionFacts = DecisionFacts,
> extends StagedPolicy<Candidate, Reason, Facts> {
  constructor(name: string, plan: StagePlan<Candidate, Reason, Facts>) {
    super(name, plan);
    refuseHook(name, plan, 'release', 'StagedPolicy');
  }

  override release(_request: RoutingRequest, _decision: RoutingDecision, _outcome: ReleaseOutcome): void {
    // No stage learns from an outcome.
  }
}

/**
 * A staged policy whose stages remember nothing (no commit or release hook: least-outstanding-requests, random):
 * its `commit` does nothing too, as a stateless policy's did before stages (issue 37: about 1 ns of a 2-instance
 * least-outstanding-requests decision, with the release walk). Throws when a stage has a commit hook.
 */
export class MemorylessStagedPolicy<
  Candidate,
  Reason extends string,
  Facts extends DecisionFacts = DecisionFacts,
> extends OutcomeBlindStagedPolicy<Candidate, Reason, Facts> {
  constructor(name: string, plan: StagePlan<Candidate, Reason, Facts>) {
    super(name, plan);
    refuseHook(name, plan, 'commit', 'OutcomeBlindStagedPolicy');
  }

  override commit(_request: RoutingRequest, _decision: RoutingDecision): void {
    // No stage remembers a decision.
  }
}
