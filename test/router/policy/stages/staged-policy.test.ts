import fc from 'fast-check';
import { SeededRng } from '../../../../router/src/common/seeded-rng';
import {
  allHealthySameModels,
  NoHealthyInstanceError,
  servesModel,
  type InstanceView,
} from '../../../../router/src/policy';
import { fewestInFlightScorer } from '../../../../router/src/policy/stages/fewest-in-flight-scorer';
import { maxScorePicker } from '../../../../router/src/policy/stages/max-score-picker';
import { randomPicker } from '../../../../router/src/policy/stages/random-picker';
import { RoundRobinPicker } from '../../../../router/src/policy/stages/round-robin-picker';
import { SERVES_MODEL_FILTER } from '../../../../router/src/policy/stages/serves-model-filter';
import { HEALTHY_FILTER } from '../../../../router/src/policy/stages/healthy-filter';
import type { Filter, Picker, Scorer } from '../../../../router/src/policy/stages/stage';
import {
  INSTANCES_AS_CANDIDATES,
  MemorylessStagedPolicy,
  OutcomeBlindStagedPolicy,
  StagedPolicy,
} from '../../../../router/src/policy/stages/staged-policy';
import { chatRequest, instances } from '../policy-test-helpers';

const ids = (vs: readonly InstanceView[]) => vs.map((v) => v.id);

/** A picker that records what it saw and chooses the first candidate when `chooses`. */
function recordingPicker(name: string, chooses: boolean, seen: Array<{ name: string; scores: number[] }>) {
  const picker: Picker<InstanceView, string> = {
    kind: 'picker',
    name,
    pick(candidates, scores) {
      seen.push({ name, scores: Array.from(scores.subarray(0, candidates.length)) });
      return chooses ? { instance: candidates[0].id, reason: name } : undefined;
    },
  };
  return picker;
}

function scorer(name: string, weight: number, score: (v: InstanceView) => number): Scorer<InstanceView, unknown> {
  return {
    kind: 'scorer',
    name,
    weight,
    score: (candidates, _facts, scores) => candidates.forEach((c, i) => (scores[i] = score(c))),
  };
}

describe('when a staged policy decides', () => {
  it('GIVEN a picker that declines THEN the next picker decides, and each picker reads the weighted sum of the scorers before it', () => {
    // GIVEN two scorers (weights 2 and 1) and two pickers, the first of which declines
    const seen: Array<{ name: string; scores: number[] }> = [];
    const policy = new StagedPolicy('test', {
      instanceFilters: [HEALTHY_FILTER],
      candidates: INSTANCES_AS_CANDIDATES,
      stages: [
        scorer('in-flight', 2, (v) => v.inFlight),
        recordingPicker('first', false, seen),
        scorer('one', 1, () => 1),
        recordingPicker('second', true, seen),
      ],
    });
    const vs = [
      { id: 'a', healthy: true, inFlight: 3 },
      { id: 'b', healthy: true, inFlight: 5 },
    ];
    // WHEN it decides
    const decision = policy.decide(chatRequest('x'), { instances: vs, nowMs: 0 });
    // THEN the second picker chose, and the scores were 2 × in-flight, then 2 × in-flight + 1
    expect(decision).toEqual({ instance: 'a', reason: 'second' });
    expect(seen).toEqual([
      { name: 'first', scores: [6, 10] },
      { name: 'second', scores: [7, 11] },
    ]);
    expect(policy.stages.map((s) => s.name)).toEqual(['healthy', 'in-flight', 'first', 'one', 'second']);
    expect(policy.stages[1]).toEqual({ kind: 'scorer', name: 'in-flight', weight: 2 });
  });

  it('GIVEN a filter that leaves no candidate THEN NoHealthyInstanceError, and no picker runs', () => {
    const seen: Array<{ name: string; scores: number[] }> = [];
    const none: Filter<InstanceView, unknown> = { kind: 'filter', name: 'none', filter: () => [] };
    const policy = new StagedPolicy('test', {
      instanceFilters: [],
      candidates: INSTANCES_AS_CANDIDATES,
      stages: [none, recordingPicker('p', true, seen)],
    });
    expect(() => policy.decide(chatRequest('x'), { instances: instances(3), nowMs: 0 })).toThrow(
      NoHealthyInstanceError,
    );
    expect(seen).toEqual([]);
  });

  it('GIVEN no picker chooses THEN the error names the policy', () => {
    const policy = new StagedPolicy('undecided', {
      instanceFilters: [],
      candidates: INSTANCES_AS_CANDIDATES,
      stages: [recordingPicker('p', false, [])],
    });
    expect(() => policy.decide(chatRequest('x'), { instances: instances(2), nowMs: 0 })).toThrow(
      'policy undecided: no picker chose among 2 candidates',
    );
  });

  it('GIVEN stages with commit and release hooks THEN each runs once per call, in stage order, with the snapshot last decided on', () => {
    const calls: string[] = [];
    const hooked = (name: string): Picker<InstanceView, string> => ({
      kind: 'picker',
      name,
      pick: (c) => ({ instance: c[0].id, reason: name }),
      commit: (_r, d, snapshot) => calls.push(`${name} commit ${d.instance} ${snapshot?.nowMs}`),
      release: (_r, _d, outcome) => calls.push(`${name} release ${outcome.kind}`),
    });
    const policy = new StagedPolicy('hooks', {
      instanceFilters: [],
      candidates: INSTANCES_AS_CANDIDATES,
      stages: [hooked('a'), hooked('b')],
    });
    const r = chatRequest('x');
    const d = policy.decide(r, { instances: instances(2), nowMs: 7 });
    policy.commit(r, d);
    policy.release(r, d, { kind: 'aborted' });
    expect(calls).toEqual([
      'a commit http://10.0.0.1:8000 7',
      'b commit http://10.0.0.1:8000 7',
      'a release aborted',
      'b release aborted',
    ]);
  });
});

describe('when a staged policy whose stages keep no memory is built', () => {
  const picksFirst = (name: string): Picker<InstanceView, string> => ({
    kind: 'picker',
    name,
    pick: (c) => ({ instance: c[0].id, reason: name }),
  });
  const planWith = (hook: object) => ({
    instanceFilters: [HEALTHY_FILTER],
    candidates: INSTANCES_AS_CANDIDATES,
    stages: [picksFirst('plain'), { ...picksFirst('remembers'), ...hook }],
  });

  it.each([
    [
      'memoryless, a commit hook',
      () => new MemorylessStagedPolicy('m', planWith({ commit: () => undefined })),
      'commit hook: use OutcomeBlindStagedPolicy',
    ],
    [
      'memoryless, a release hook',
      () => new MemorylessStagedPolicy('m', planWith({ release: () => undefined })),
      'release hook: use StagedPolicy',
    ],
    [
      'outcome-blind, a release hook',
      () => new OutcomeBlindStagedPolicy('m', planWith({ release: () => undefined })),
      'release hook: use StagedPolicy',
    ],
  ] as const)('GIVEN %s THEN it refuses the plan, naming the stage', (_label, build, message) => {
    expect(build).toThrow(`policy m: stage remembers has a ${message}`);
  });

  it('GIVEN an outcome-blind policy with a commit hook THEN the hook runs on commit', () => {
    const committed: string[] = [];
    const policy = new OutcomeBlindStagedPolicy(
      'o',
      planWith({ commit: (_r: unknown, d: { instance: string }) => committed.push(d.instance) }),
    );
    const r = chatRequest('x');
    const d = policy.decide(r, { instances: instances(3), nowMs: 0 });
    policy.commit(r, d);
    policy.release(r, d, { kind: 'completed' });
    expect(committed).toEqual([d.instance]);
  });

  it('GIVEN stages without hooks THEN a memoryless policy decides as StagedPolicy does', () => {
    const plan = { instanceFilters: [HEALTHY_FILTER], candidates: INSTANCES_AS_CANDIDATES, stages: [picksFirst('p')] };
    const r = chatRequest('x');
    const snapshot = { instances: instances(3), nowMs: 0 };
    const decision = new MemorylessStagedPolicy('m', plan).decide(r, snapshot);
    expect(decision).toEqual(new StagedPolicy('s', plan).decide(r, snapshot));
  });
});

describe('when the healthy filter runs', () => {
  it('GIVEN every instance healthy THEN the same array passes (nothing allocated)', () => {
    const vs = instances(4);
    expect(HEALTHY_FILTER.filter(vs, undefined)).toBe(vs);
  });

  it('GIVEN any health pattern THEN exactly the healthy instances pass, in order, and the input is unchanged', () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { minLength: 0, maxLength: 12 }), (health) => {
        const vs = Object.freeze(health.map((healthy, i) => Object.freeze({ id: `i${i}`, healthy, inFlight: i })));
        const passed = HEALTHY_FILTER.filter(vs, undefined);
        expect(ids(passed)).toEqual(ids(vs.filter((v) => v.healthy)));
        for (const v of passed) expect(vs).toContain(v);
      }),
      { numRuns: 100 },
    );
  });
});

describe('when a plan is the standard filters and one picker, with at most one scorer before it (the direct path)', () => {
  const viewArb = fc.record({
    healthy: fc.boolean(),
    inFlight: fc.integer({ min: 0, max: 4 }),
    models: fc.option(fc.subarray(['m', 'sql']), { nil: undefined }),
  });

  /** The same stages, with the serves-model filter as a copy: not the standard filter object, so the general loop runs. */
  function generalTwin(stages: readonly (Scorer<InstanceView, unknown> | Picker<InstanceView, string, unknown>)[]) {
    return new StagedPolicy('general', {
      instanceFilters: [{ ...SERVES_MODEL_FILTER }, HEALTHY_FILTER],
      candidates: INSTANCES_AS_CANDIDATES,
      stages,
    });
  }

  /** The scorer without its per-candidate form: the direct path checks the filters and scores in two passes. */
  function batchOnly(scorer: Scorer<InstanceView, unknown>): Scorer<InstanceView, unknown> {
    const { scoreOf, ...rest } = scorer;
    expect(scoreOf).toBeDefined(); // the case this test exists for: a scorer that had one
    return rest;
  }

  it.each([
    [
      "a weighted scorer (scored in the filters' pass) then the max-score picker",
      (rng: SeededRng) => [fewestInFlightScorer(3), maxScorePicker(rng, 'min')],
    ],
    [
      "a scorer of weight 0 (scored in the filters' pass: every candidate ties) then the max-score picker",
      (rng: SeededRng) => [fewestInFlightScorer(0), maxScorePicker(rng, 'min')],
    ],
    [
      "a scorer of negative weight (scored in the filters' pass: the most in flight wins) then the max-score picker",
      (rng: SeededRng) => [fewestInFlightScorer(-2), maxScorePicker(rng, 'min')],
    ],
    [
      'a weighted scorer without scoreOf (scored in a pass of its own) then the max-score picker',
      (rng: SeededRng) => [batchOnly(fewestInFlightScorer(3)), maxScorePicker(rng, 'min')],
    ],
    ['a lone random picker', (rng: SeededRng) => [randomPicker(rng, 'random')]],
    ['a lone round-robin picker (pickEligible), each decision committed', () => [new RoundRobinPicker('rr')]],
  ] as const)(
    'GIVEN %s and any instances, healthy or not, serving any models, with or without the snapshot saying all are healthy and serve the same models THEN it decides exactly as the general loop, and refuses alike',
    (_label, stagesOf) => {
      fc.assert(
        fc.property(
          fc.array(viewArb, { minLength: 0, maxLength: 8 }),
          fc.constantFrom('m', 'sql', ''),
          fc.nat(),
          fc.boolean(),
          (specs, model, seed, flagged) => {
            const vs: InstanceView[] = specs.map((s, i) => ({
              id: `i${i}`,
              healthy: s.healthy,
              inFlight: s.inFlight,
              ...(s.models === undefined ? {} : { servedModels: new Set(s.models) }),
            }));
            const direct = new StagedPolicy('direct', {
              instanceFilters: [SERVES_MODEL_FILTER, HEALTHY_FILTER],
              candidates: INSTANCES_AS_CANDIDATES,
              stages: stagesOf(new SeededRng(seed)),
            });
            const general = generalTwin(stagesOf(new SeededRng(seed)));
            const request = { ...chatRequest('x'), model };
            // As the server and the simulator pass it (allHealthySameModels kept as instances change), or absent.
            const snapshot = flagged
              ? { instances: vs, nowMs: 0, allHealthySameModels: allHealthySameModels(vs) }
              : { instances: vs, nowMs: 0 };
            const eligible = vs.filter((v) => v.healthy && servesModel(v, model));
            for (let k = 0; k < 4; k++) {
              if (eligible.length === 0) {
                expect(() => direct.decide(request, snapshot)).toThrow(NoHealthyInstanceError);
                expect(() => general.decide(request, snapshot)).toThrow(NoHealthyInstanceError);
              } else {
                const decision = direct.decide(request, snapshot);
                expect(decision).toEqual(general.decide(request, snapshot));
                direct.commit(request, decision); // moves a round-robin cursor: the next decision starts after it
                general.commit(request, decision);
              }
            }
          },
        ),
      );
    },
  );
});

describe('when a direct-path plan has a commit hook', () => {
  it("GIVEN the standard filters, a scorer scored in the filters' pass and a max-score picker whose commit hook reads the snapshot THEN the hook gets the snapshot each decision was made on", () => {
    const committedAt: number[] = [];
    const picker = maxScorePicker(new SeededRng(1), 'min');
    const hookedPicker: Picker<InstanceView, 'min'> = {
      kind: 'picker',
      name: 'max-score',
      pick: (c, s) => picker.pick(c, s),
      begin: () => picker.begin(),
      offer: (i, score) => picker.offer(i, score),
      choose: (c) => picker.choose(c),
      commit: (_r, _d, snapshot) => committedAt.push(snapshot?.nowMs ?? -1),
    };
    const policy = new StagedPolicy('hooked direct', {
      instanceFilters: [SERVES_MODEL_FILTER, HEALTHY_FILTER],
      candidates: INSTANCES_AS_CANDIDATES,
      stages: [fewestInFlightScorer(1), hookedPicker],
    });
    const r = chatRequest('x');
    for (const nowMs of [3, 5]) {
      const vs = instances(2);
      policy.commit(r, policy.decide(r, { instances: vs, nowMs, allHealthySameModels: allHealthySameModels(vs) }));
    }
    expect(committedAt).toEqual([3, 5]);
  });
});

describe('when a lone pickEligible picker has a commit hook', () => {
  it.each([
    ['reads the snapshot (commitReadsSnapshot absent)', undefined, [3, 5]],
    ['declares it never reads it', false, [-1, -1]],
  ] as const)(
    'GIVEN the standard filters and a round-robin picker whose commit hook %s THEN the hook gets the snapshot each decision was made on only when it may read it',
    (_label, commitReadsSnapshot, expected) => {
      const committedAt: number[] = [];
      const picker = new RoundRobinPicker('rr');
      const hookedPicker: Picker<InstanceView, 'rr'> = {
        kind: 'picker',
        name: 'round-robin',
        pick: (c, s, facts) => picker.pick(c, s, facts),
        pickEligible: (vs, eligible, request) => picker.pickEligible(vs, eligible, request),
        commit: (_r, _d, snapshot) => committedAt.push(snapshot?.nowMs ?? -1),
        ...(commitReadsSnapshot === undefined ? {} : { commitReadsSnapshot }),
      };
      const policy = new StagedPolicy('hooked eligible', {
        instanceFilters: [SERVES_MODEL_FILTER, HEALTHY_FILTER],
        candidates: INSTANCES_AS_CANDIDATES,
        stages: [hookedPicker],
      });
      const r = chatRequest('x');
      for (const nowMs of [3, 5]) {
        const vs = instances(2);
        policy.commit(r, policy.decide(r, { instances: vs, nowMs, allHealthySameModels: allHealthySameModels(vs) }));
      }
      expect(committedAt).toEqual(expected);
    },
  );
});

describe('when the max-score picker chooses', () => {
  /** The rule as llm-d states it, written out plainly: the highest score; among equals, the draw's index. */
  function reference(scores: readonly number[], draw: number): number | undefined {
    const max = Math.max(...scores.filter((x) => !Number.isNaN(x)));
    const best = scores.flatMap((x, i) => (x === max ? [i] : []));
    if (best.length === 0) return undefined;
    return best.length === 1 ? best[0] : best[Math.floor(draw * best.length)];
  }

  it('GIVEN any scores, ties and -Infinity included THEN pick chooses as the plain rule, drawing once only for a tie', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(-Infinity, -3, -1, 0, 2), { minLength: 1, maxLength: 9 }),
        fc.nat(),
        (scores, seed) => {
          const candidates = scores.map((_, i) => ({ id: `i${i}`, healthy: true, inFlight: 0 }));
          const draws = new SeededRng(seed);
          const draw = new SeededRng(seed).next();
          const decision = maxScorePicker(draws, 'max').pick(candidates, Float64Array.from(scores));
          const expected = reference(scores, draw);
          expect(decision?.instance).toBe(expected === undefined ? undefined : `i${expected}`);
          const tie = scores.filter((x) => x === Math.max(...scores)).length > 1;
          // One draw for a tie, none otherwise: the next draw is the seed's second, or its first.
          const next = new SeededRng(seed);
          if (tie) next.next();
          expect(draws.next()).toBe(next.next());
        },
      ),
    );
  });

  it('GIVEN scores offered one at a time with candidates never offered between them THEN choose skips those, even when the only scores are -Infinity', () => {
    const candidates = ['a', 'b', 'c', 'd'].map((id) => ({ id, healthy: true, inFlight: 0 }));
    const picker = maxScorePicker(new SeededRng(1), 'max');
    const chosen = new Set<string>();
    for (let k = 0; k < 40; k++) {
      picker.begin();
      picker.offer(1, -Infinity);
      picker.offer(3, -Infinity);
      chosen.add(picker.choose(candidates)!.instance);
    }
    expect([...chosen].sort()).toEqual(['b', 'd']);
    picker.begin();
    picker.offer(3, -Infinity);
    expect(picker.choose(candidates)?.instance).toBe('d');
  });
});
