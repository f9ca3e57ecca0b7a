import type { RoutingRequest } from '../../protocol/routing-request';
import {
  NoHealthyInstanceError,
  type InstanceView,
  type RoutingDecision,
  type RoutingSnapshot,
} from '../routing-policy';
import { servesModel } from '../served-models';
import { HEALTHY_FILTER } from './healthy-filter';
import { SERVES_MODEL_FILTER } from './serves-model-filter';
import type { DecisionFacts, Picker, Scorer, Stage } from './stage';

/**
 * How StagedPolicy decides a plan that is the standard instance filters (serves-model, then healthy), the instances
 * themselves as candidates, no per-decision facts, and at most one scorer before one picker (least-outstanding-
 * requests, random, round-robin): the same stages in the same order, without the stage-by-stage loop, which costs
 * such a policy more than its own rule (issue 37). One small object per form, so the policy's `decide` stays small
 * enough for V8 to inline into its caller.
 */
export interface DirectRun<Reason extends string> {
  decide(request: RoutingRequest, snapshot: RoutingSnapshot): RoutingDecision<Reason>;
}

type InstanceScorer = Scorer<InstanceView, DecisionFacts>;
type InstancePicker<Reason extends string> = Picker<InstanceView, Reason, DecisionFacts>;

/**
 * The direct run for the stages after the standard instance filters, or undefined when they have no direct form.
 * `commitsReadLast`: some stage's commit hook reads `last` (StagedPolicy.commit passes it the decision's snapshot).
 */
export function directRunOf<Reason extends string>(
  policy: string,
  stages: readonly Stage<InstanceView, Reason, DecisionFacts>[],
  last: LastDecision,
  commitsReadLast: boolean,
): DirectRun<Reason> | undefined {
  const [first, second] = stages;
  if (stages.length === 1 && first.kind === 'picker')
    return first.pickEligible !== undefined
      ? new EligiblePickRun(first, commitsReadLast ? last : undefined)
      : new FilteredRun(policy, undefined, first, last);
  if (stages.length !== 2 || first.kind !== 'scorer' || second.kind !== 'picker') return undefined;
  const { scoreOf } = first;
  const offers = second.begin !== undefined && second.offer !== undefined && second.choose !== undefined;
  // scoreOf and the offers read no facts: only a commit hook would read what `last` records.
  if (scoreOf !== undefined && offers)
    return new OfferedScoresRun(policy, first, scoreOf, second, commitsReadLast ? last : undefined);
  return new FilteredRun(policy, first, second, last);
}

/**
 * The request and snapshot of the policy's last decision, refilled for each: the facts its stages read during it
 * (nothing allocated per decision), and the snapshot StagedPolicy gives the commit hooks. Undefined before the first.
 */
export class LastDecision {
  request: RoutingRequest | undefined = undefined;
  snapshot: RoutingSnapshot | undefined = undefined;

  /** The facts of the decision now being made (the fields just filled). */
  get facts(): DecisionFacts {
    return this as DecisionFacts;
  }
}

/**
 * True when the snapshot says every instance passes the standard instance filters for `model`: its caller keeps
 * RoutingSnapshot.allHealthySameModels, and the first instance serves the model, so all do. The runs then check none.
 */
function allPass(snapshot: RoutingSnapshot, model: string): boolean {
  const instances = snapshot.instances;
  return snapshot.allHealthySameModels === true && instances.length > 0 && servesModel(instances[0], model);
}

/** True when the standard instance filters pass `instance` for the request (a picker's `pickEligible` asks). */
function servesAndHealthy(instance: InstanceView, request: RoutingRequest): boolean {
  return instance.healthy && servesModel(instance, request.model);
}

/** True when every instance is healthy and serves `model`: the standard instance filters would pass them all. */
function allServeAndHealthy(instances: readonly InstanceView[], model: string): boolean {
  for (let i = 0; i < instances.length; i++) {
    const instance = instances[i];
    if (!instance.healthy || !servesModel(instance, model)) return false;
  }
  return true;
}

/**
 * A scorer with `scoreOf`, then a picker that takes offers (max-score): one pass checks each instance against the
 * filters (unless allPass), scores it with the scorer's weight (score × weight, as the general loop weighs it) and
 * offers it; an instance the filters drop is never offered. The picker chooses from the offers alone: no score is
 * stored.
 */
class OfferedScoresRun<Reason extends string> implements DirectRun<Reason> {
  /**
   * The scorer's score × its weight, as the general loop weighs it; the score itself at weight 1 (x × 1 is x for
   * every number), chosen once here rather than per instance (issue 37: the per-instance test of the weight
   * measured about 1 ns of a 2-instance decision, 10 of a 32-instance one).
   */
  private readonly weightedScoreOf: (candidate: InstanceView) => number;

  constructor(
    private readonly policy: string,
    scorer: InstanceScorer,
    scoreOf: (candidate: InstanceView) => number,
    private readonly picker: InstancePicker<Reason>,
    /** Undefined when no commit hook reads it: its two stores then measured a fifth of a 2-instance decision. */
    private readonly last: LastDecision | undefined,
  ) {
    const weight = scorer.weight;
    this.weightedScoreOf = weight === 1 ? scoreOf : (candidate) => scoreOf(candidate) * weight;
  }

  decide(request: RoutingRequest, snapshot: RoutingSnapshot): RoutingDecision<Reason> {
    const last = this.last;
    if (last !== undefined) {
      last.request = request;
      last.snapshot = snapshot;
    }
    const instances = snapshot.instances;
    const n = instances.length;
    const model = request.model;
    const all = allPass(snapshot, model);
    const weightedScoreOf = this.weightedScoreOf;
    const picker = this.picker;
    // Counted where the filters drop an instance, off the usual path (a count per offer measured slower at 32).
    let dropped = 0;
    picker.begin!();
    for (let i = 0; i < n; i++) {
      const instance = instances[i];
      if (!all && !(instance.healthy && servesModel(instance, model))) {
        dropped++;
        continue;
      }
      picker.offer!(i, weightedScoreOf(instance));
    }
    if (dropped === n) throw new NoHealthyInstanceError();
    const decision = picker.choose!(instances);
    if (decision === undefined)
      throw new Error(`policy ${this.policy}: no picker chose among ${n - dropped} candidates`);
    return decision;
  }
}

/**
 * A lone picker with `pickEligible` (round-robin): it reads only the instances it needs, and no facts. It asks the
 * filters' check of each one it reads (usually one) rather than allPass first: that measured ~1 ns less at 2.
 */
class EligiblePickRun<Reason extends string> implements DirectRun<Reason> {
  constructor(
    private readonly picker: InstancePicker<Reason>,
    /** Undefined when no commit hook reads it (round-robin's does not), as OfferedScoresRun's. */
    private readonly last: LastDecision | undefined,
  ) {}

  decide(request: RoutingRequest, snapshot: RoutingSnapshot): RoutingDecision<Reason> {
    const last = this.last;
    if (last !== undefined) {
      last.request = request;
      last.snapshot = snapshot;
    }
    const decision = this.picker.pickEligible!(snapshot.instances, servesAndHealthy, request);
    if (decision === undefined) throw new NoHealthyInstanceError();
    return decision;
  }
}

/**
 * Any other direct plan (random; a scorer without `scoreOf` or a picker without offers): when every instance passes
 * the filters (the usual case: allPass, else one check replaces their two calls) the candidates are the snapshot's own array;
 * the lone scorer writes straight into the scores.
 */
class FilteredRun<Reason extends string> implements DirectRun<Reason> {
  private scores = new Float64Array(0);
  private readonly scratch: InstanceView[] = [];

  constructor(
    private readonly policy: string,
    private readonly scorer: InstanceScorer | undefined,
    private readonly picker: InstancePicker<Reason>,
    private readonly last: LastDecision,
  ) {}

  decide(request: RoutingRequest, snapshot: RoutingSnapshot): RoutingDecision<Reason> {
    const last = this.last;
    last.request = request;
    last.snapshot = snapshot;
    const facts = last.facts;
    let candidates = snapshot.instances;
    if (!allPass(snapshot, request.model) && !allServeAndHealthy(candidates, request.model)) {
      const scratch = this.scratch;
      candidates = HEALTHY_FILTER.filter(SERVES_MODEL_FILTER.filter(candidates, facts, scratch), facts, scratch);
    }
    if (candidates.length === 0) throw new NoHealthyInstanceError();
    const scorer = this.scorer;
    if (scorer !== undefined) {
      if (this.scores.length < candidates.length) this.scores = new Float64Array(candidates.length * 2);
      scorer.score(candidates, facts, this.scores);
      const w = scorer.weight;
      if (w !== 1) for (let c = 0; c < candidates.length; c++) this.scores[c] *= w;
    }
    const decision = this.picker.pick(candidates, this.scores, facts);
    if (decision === undefined)
      throw new Error(`policy ${this.policy}: no picker chose among ${candidates.length} candidates`);
    return decision;
  }
}
