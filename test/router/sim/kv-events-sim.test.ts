import { builtinProfile, type EngineProfile } from '../../../router/src/emulator/engine-profile';
import type { PolicyConfig } from '../../../router/src/policy';
import type { RequestRecord } from '../../../router/src/report/request-record';
import type { KvEventBatch } from '../../../router/src/kv-events/kv-event';
import { ReplicaKvReceiver, simulatedPromptBlocks } from '../../../router/src/sim/simulated-kv-events';
import { simulate, type SimulationConfig } from '../../../router/src/sim/simulator';
import type { RoutingRequest } from '../../../router/src/protocol/routing-request';
import { parseWorkloadSpec } from '../../../router/src/workload';

// One request at a time, long outputs on engines with room for ~4 prefixes: each answer's own blocks evict
// cached prefixes, which the router's estimate (it indexes prompts only) does not see.
const SPEC =
  'long-context?groups=8&prefixTokens=1000&suffixTokens=50..100&outputTokens=1500..2500&count=40&seed=5&concurrency=1';
const p5 = builtinProfile('p5-llama-3.1-70b');
const small: EngineProfile = { ...p5, name: 'p5-small-kv', kvCapacityBlocks: 400, maxModelLen: 6400 };

function run(policy: PolicyConfig, extra: Partial<SimulationConfig> = {}): ReturnType<typeof simulate> {
  return simulate({ workload: parseWorkloadSpec(SPEC), policy, seed: 2, instances: 3, profile: small, ...extra });
}

/** The records without decision time (wall-clock, never the same twice). */
const decisions = (records: readonly RequestRecord[]) => records.map(({ decisionMicros: _, ...rest }) => rest);

const mispredicted = (records: readonly RequestRecord[]) =>
  records.filter((r) => (r.predictedCachedTokens ?? 0) !== (r.cachedPromptTokens ?? 0)).length;

describe('when the simulated routers follow the engines’ KV events', () => {
  it('GIVEN no delay and one request at a time THEN every cache-aware prediction is what the engine delivered, where the estimate misses some', () => {
    const estimate = run({ name: 'cache-aware' });
    const events = run({ name: 'cache-aware' }, { kvEvents: { delayMs: 0, lossRate: 0 } });
    expect(mispredicted(estimate.records)).toBeGreaterThan(0);
    expect(mispredicted(events.records)).toBe(0);
    expect(events.records.some((r) => (r.cachedPromptTokens ?? 0) > 0)).toBe(true);
    expect(events.kvEvents).toMatchObject({ lost: 0, staleMarks: 0 });
    expect(events.kvEvents!.published).toBeGreaterThan(0);
  });

  it('GIVEN a policy that does not read them THEN its run is the same with events on and off (they change no engine)', () => {
    const off = run({ name: 'least-outstanding-requests' });
    const on = run({ name: 'least-outstanding-requests' }, { kvEvents: { delayMs: 25, lossRate: 0.1 } });
    expect(decisions(on.records)).toEqual(decisions(off.records));
  });

  it('GIVEN every batch lost THEN cache-aware decides as on its own estimate', () => {
    const estimate = run({ name: 'cache-aware' });
    const lost = run({ name: 'cache-aware' }, { kvEvents: { delayMs: 0, lossRate: 1 } });
    expect(decisions(lost.records)).toEqual(decisions(estimate.records));
    expect(lost.kvEvents!.lost).toBeGreaterThan(0);
    expect(lost.kvEvents!.lost).toBeLessThanOrEqual(lost.kvEvents!.published);
  });

  it.each([
    [{ delayMs: -1, lossRate: 0 }, /kvEvents.delayMs must be between 0 and 60000 \(got -1\)/],
    [{ delayMs: 60_001, lossRate: 0 }, /kvEvents.delayMs must be between 0 and 60000 \(got 60001\)/],
    [{ delayMs: 0, lossRate: 1.01 }, /kvEvents.lossRate must be between 0 and 1 \(got 1.01\)/],
    [{ delayMs: 0, lossRate: -0.01 }, /kvEvents.lossRate must be between 0 and 1/],
  ])('GIVEN kvEvents %j THEN the run is refused naming the field and its range', (kvEvents, message) => {
    expect(() => run({ name: 'cache-aware' }, { kvEvents })).toThrow(message);
  });
});

describe('when a replica receives an engine’s batches', () => {
  const request = { model: 'm' } as RoutingRequest;
  const hashes = [101, 202, 303];
  const blocks = simulatedPromptBlocks(hashes, 3 * 16 + 5, 16);
  /** A batch storing the first `n` blocks of the prompt (its token ids as the simulator names them). */
  const stored = (seq: number, n: number): KvEventBatch => ({
    topic: '',
    seq: BigInt(seq),
    timestampSeconds: 0,
    events: [
      {
        type: 'BlockStored',
        blockHashes: hashes.slice(0, n).map(String),
        tokenIds: Array.from(blocks.tokenIds).slice(0, n * 16),
        blockSize: 16,
      },
    ],
  });
  /** A receiver whose draws are scripted: a draw below the loss rate loses the batch. */
  const receiver = (draws: number[]) =>
    new ReplicaKvReceiver(['e0'], 0.5, { next: () => draws.shift() ?? 0.9 }, () => blocks);

  it('GIVEN batches in order THEN the view states the blocks the engine stored', () => {
    const r = receiver([0.9, 0.9]);
    r.receive(0, stored(0, 1));
    expect(r.truth.viewOf('e0')!.cachedTokensOf(request)).toBe(16);
    r.receive(0, stored(1, 3));
    expect(r.truth.viewOf('e0')!.cachedTokensOf(request)).toBe(48);
  });

  it('GIVEN a lost batch THEN the next one marks the engine stale (unknown: the estimate) until its stream restarts', () => {
    const r = receiver([0.9, 0.1, 0.9, 0.9]);
    r.receive(0, stored(0, 1));
    r.receive(0, stored(1, 2)); // lost
    r.receive(0, stored(2, 3));
    expect(r.lost).toBe(1);
    expect(r.staleMarks).toBe(1);
    expect(r.truth.viewOf('e0')!.cachedTokensOf(request)).toBeUndefined();
    // A new engine process: its stream starts again at 0 with an empty cache.
    r.receive(0, stored(0, 2));
    expect(r.truth.viewOf('e0')!.cachedTokensOf(request)).toBe(32);
  });
});
