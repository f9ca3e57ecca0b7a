import { SeededRng } from '../../../router/src/common/seeded-rng';
import { loadRouterConfig } from '../../../router/src/config';
import {
  createPolicy,
  EngineStateMissingError,
  type InstanceView,
  type RoutingPolicy,
} from '../../../router/src/policy';
import type { KvLoadCandidate, KvLoadFacts } from '../../../router/src/policy/stages/kv-load-candidates';
import { precisePrefixScorer } from '../../../router/src/policy/stages/precise-prefix-scorer';
import { chatRequest } from './policy-test-helpers';

const id = (i: number) => `http://10.0.0.${i + 1}:8000`;
const PROMPT = 'You are the support assistant of ACME. '.repeat(200); // 8,000 characters: 2,000 tokens, 31 blocks of 64

const precise = (seed = 1): RoutingPolicy => createPolicy({ name: 'llm-d-precise' }, { rng: new SeededRng(seed) });

/** Pods by what their engines hold of PROMPT (tokens) and their waiting requests. */
function pods(specs: ReadonlyArray<{ cached: number; waiting?: number }>): InstanceView[] {
  return specs.map((s, i) => ({
    id: id(i),
    healthy: true,
    inFlight: s.waiting ?? 0,
    decodeSequences: 0,
    kvCapacityTokens: 1_000_000,
    engine: { cachedPromptTokens: s.cached },
  }));
}

const decide = (p: RoutingPolicy, instances: readonly InstanceView[]) =>
  p.decide(chatRequest(PROMPT), { instances, nowMs: 0 }).instance;

describe("when llm-d's precise prefix-cache scorer scores pods by their engines' cached runs", () => {
  const scored = (overlaps: readonly number[]) => {
    const scores = new Float64Array(overlaps.length);
    const candidates = overlaps.map((overlapBlocks) => ({ overlapBlocks }) as KvLoadCandidate);
    precisePrefixScorer(2).score(candidates, {} as KvLoadFacts, scores);
    return [...scores];
  };

  it('GIVEN holders of different runs THEN they are min-max normalized among themselves and a pod holding none scores 0', () => {
    expect(scored([0, 5, 10, 7.5])).toEqual([0, 0, 1, 0.5]);
  });

  it('GIVEN one holder, however short its run, or equal holders THEN each holder scores 1', () => {
    expect(scored([0, 1, 0])).toEqual([0, 1, 0]);
    expect(scored([4, 4])).toEqual([1, 1]);
  });

  it('GIVEN no pod holds the first block THEN every pod scores 0', () => {
    expect(scored([0, 0, 0])).toEqual([0, 0, 0]);
  });
});

describe('when llm-d-precise decides', () => {
  it("GIVEN the router sent the prompt to one pod but that pod's engine evicted it, and another's holds it THEN llm-d-precise goes to the holder while llm-d follows what it sent", () => {
    const approximate = createPolicy({ name: 'llm-d' }, { rng: new SeededRng(1) });
    const request = chatRequest(PROMPT);
    const sent = { instance: id(0), reason: 'llm-d-max-score' };
    approximate.commit(request, sent);
    approximate.release(request, sent, { kind: 'completed' });
    const views = pods([{ cached: 0 }, { cached: 1920 }, { cached: 0 }]);
    expect(decide(precise(), views)).toBe(id(1));
    expect(decide(approximate, views)).toBe(id(0));
  });

  it('GIVEN the longest holder has the longest queue THEN it still wins over a shorter holder (2 + 1 + 0 against 0 + 1 + 1: the shorter run scores 0)', () => {
    expect(decide(precise(), pods([{ cached: 1920, waiting: 6 }, { cached: 960 }, { cached: 0, waiting: 3 }]))).toBe(
      id(0),
    );
  });

  it("GIVEN engines holding runs of the prompt THEN the decision predicts the chosen engine's own run, not its whole blocks", () => {
    const views = pods([{ cached: 1000 }, { cached: 0 }]); // 15 whole 64-token blocks and 40 tokens more
    const decision = precise().decide(chatRequest(PROMPT), { instances: views, nowMs: 0 });
    expect(decision).toEqual({ instance: id(0), reason: 'llm-d-max-score', predictedCachedTokens: 1000 });
    const cold = precise().decide(chatRequest(PROMPT), { instances: pods([{ cached: 0 }]), nowMs: 0 });
    expect(cold.predictedCachedTokens).toBe(0);
  });

  it("GIVEN a run shorter than one of llm-d's 64-token blocks THEN it is no match: the pods tie and either may win", () => {
    const winners = new Set<string>();
    for (let seed = 1; seed <= 16; seed++) winners.add(decide(precise(seed), pods([{ cached: 48 }, { cached: 0 }])));
    expect([...winners].sort()).toEqual([id(0), id(1)]);
  });

  it('GIVEN an instance without engine state THEN it throws, naming the policy', () => {
    expect(() => decide(precise(), [{ id: id(0), healthy: true, inFlight: 0 }])).toThrow(EngineStateMissingError);
    expect(() => decide(precise(), [{ id: id(0), healthy: true, inFlight: 0 }])).toThrow(/policy llm-d-precise/);
  });
});

describe('when serve is configured with llm-d-precise', () => {
  const backend = ['http://127.0.0.1:1', 'http://127.0.0.1:2'];

  it('GIVEN no --kv-events THEN it is refused, naming the flag and every backend without events', () => {
    expect(() => loadRouterConfig({ flags: { policy: 'llm-d-precise', backend }, env: {} })).toThrow(
      "--policy is refused: llm-d-precise reads each engine's cached blocks, which serve learns from the engines' KV events: give --kv-events BACKEND_URL=ZMQ_ENDPOINT for every backend (missing for http://127.0.0.1:1, http://127.0.0.1:2)",
    );
  });

  it('GIVEN --kv-events for one of two backends THEN it is refused, naming the other', () => {
    const flags = {
      policy: 'llm-d-precise',
      backend,
      kvEvents: ['http://127.0.0.1:1=tcp://127.0.0.1:5557'],
      tokenizer: 'emulator',
    };
    expect(() => loadRouterConfig({ flags, env: {} })).toThrow('(missing for http://127.0.0.1:2)');
  });

  it('GIVEN --kv-events for every backend THEN it is accepted', () => {
    const flags = {
      policy: 'llm-d-precise',
      backend,
      kvEvents: ['http://127.0.0.1:1=tcp://127.0.0.1:5557', 'http://127.0.0.1:2=tcp://127.0.0.1:5558'],
      tokenizer: 'emulator',
    };
    expect(loadRouterConfig({ flags, env: {} }).policy).toMatchObject({ name: 'llm-d-precise' });
  });
});
