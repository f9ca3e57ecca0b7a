import fc from 'fast-check';
import { SeededRng } from '../../../router/src/common/seeded-rng';
import {
  createPolicy,
  NoHealthyInstanceError,
  POLICY_NAMES,
  rendezvousRanking,
  SageMakerPrefixAwarePolicy,
  type InstanceView,
} from '../../../router/src/policy';
import { bodyRequest, chatRequest, IDLE_ENGINE_QUEUE, instances, snapshot } from './policy-test-helpers';

const PREFIX = 1024;

function policy(concurrencyThreshold = 8, prefixLength = PREFIX): SageMakerPrefixAwarePolicy {
  return new SageMakerPrefixAwarePolicy({ prefixLength, concurrencyThreshold });
}

function pick(views: readonly InstanceView[], text: string, p = policy()): string {
  return p.decide(chatRequest(text), snapshot(views)).instance;
}

/** Five standard deviations of a share p measured over n keys: a bound chance breaks about once in 3.5 million. */
function fiveSigma(p: number, n: number): number {
  return 5 * Math.sqrt((p * (1 - p)) / n);
}

const idSet = fc.uniqueArray(fc.string({ minLength: 1, maxLength: 24 }), { minLength: 1, maxLength: 12 });

describe('when the sagemaker-prefix-aware policy routes by prefix key', () => {
  it('GIVEN the same request and instance list THEN every replica (fresh policy, any list order) picks the same instance', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 3000 }),
        fc.option(fc.string({ minLength: 1, maxLength: 64 })),
        idSet,
        fc.nat(),
        (text, tenant, ids, rot) => {
          const views = ids.map((id) => ({ id, healthy: true, inFlight: 0 }));
          const rotated = views.map((_, i) => views[(i + rot) % views.length]);
          const request = chatRequest(text, tenant ?? undefined);
          const a = policy().decide(request, snapshot(views));
          const b = policy().decide(request, snapshot(rotated));
          expect(b).toEqual(a);
          expect(a.reason).toBe('prefix-affinity');
        },
      ),
    );
  });

  it('GIVEN two texts that share the first prefixLength characters THEN they go to the same instance whatever follows', () => {
    fc.assert(
      fc.property(fc.string({ minLength: PREFIX, maxLength: PREFIX }), fc.string(), fc.string(), (prefix, a, b) => {
        const views = instances(8);
        expect(pick(views, prefix + a)).toBe(pick(views, prefix + b));
      }),
    );
  });

  it('GIVEN the same text with different tenant keys THEN the keys differ, and with the same tenant key they agree', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 200 }),
        fc.string({ minLength: 1, maxLength: 64 }),
        fc.string({ minLength: 1, maxLength: 64 }),
        (text, t1, t2) => {
          fc.pre(t1 !== t2);
          const p = policy();
          expect(p.routingKey(chatRequest(text, t1))).toBe(p.routingKey(chatRequest(text, t1)));
          expect(p.routingKey(chatRequest(text, t1))).not.toBe(p.routingKey(chatRequest(text, t2)));
          expect(p.routingKey(chatRequest(text, t1))).not.toBe(p.routingKey(chatRequest(text)));
        },
      ),
    );
  });

  it('GIVEN N instances WHEN one is removed THEN only the keys it owned move, about 1/N of all keys', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 16 }), fc.nat(), (n, victimSeed) => {
        const views = instances(n);
        const victim = views[victimSeed % n].id;
        const remaining = views.filter((v) => v.id !== victim);
        const p = policy();
        const keys = 1500;
        let moved = 0;
        let movedFromOthers = 0;
        let victimKept = 0;
        for (let k = 0; k < keys; k++) {
          const text = `conversation ${victimSeed}-${k}`;
          const before = pick(views, text, p);
          const after = pick(remaining, text, p);
          if (before !== after) {
            moved++;
            if (before !== victim) movedFromOthers++;
          } else if (before === victim) {
            victimKept++;
          }
        }
        expect({ movedFromOthers, victimKept }).toEqual({ movedFromOthers: 0, victimKept: 0 });
        expect(Math.abs(moved / keys - 1 / n)).toBeLessThan(fiveSigma(1 / n, keys));
      }),
      { numRuns: 10 },
    );
  });

  it('GIVEN N instances WHEN one is added THEN only keys taken by the new instance move, about 1/(N+1) of all keys', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 16 }), fc.nat(), (n, seed) => {
        const views = instances(n);
        const added = { id: `http://new-${seed}:8000`, healthy: true, inFlight: 0 };
        const grown = [...views, added];
        const p = policy();
        const keys = 1500;
        let moved = 0;
        let movedElsewhere = 0;
        for (let k = 0; k < keys; k++) {
          const text = `prompt ${seed}-${k}`;
          const before = pick(views, text, p);
          const after = pick(grown, text, p);
          if (before !== after) {
            moved++;
            if (after !== added.id) movedElsewhere++;
          }
        }
        expect(movedElsewhere).toBe(0);
        expect(Math.abs(moved / keys - 1 / (n + 1))).toBeLessThan(fiveSigma(1 / (n + 1), keys));
      }),
      { numRuns: 10 },
    );
  });

  it('GIVEN many distinct prefixes THEN each of 8 instances gets between 9% and 16% of them', () => {
    const views = instances(8);
    const counts = new Map<string, number>();
    const p = policy();
    for (let k = 0; k < 8000; k++) {
      const id = pick(views, `system prompt variant ${k}`, p);
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    for (const v of views) {
      const share = (counts.get(v.id) ?? 0) / 8000;
      expect(share).toBeGreaterThan(0.09);
      expect(share).toBeLessThan(0.16);
    }
  });
});

describe('when the affinity instance reaches concurrencyThreshold', () => {
  const threshold = 4;
  const text = 'a shared system prompt';

  function withAffinityLoad(load: number, others: number[]): { views: InstanceView[]; affinity: string } {
    const base = instances(others.length + 1);
    const affinity = pick(base, text, policy(threshold));
    let o = 0;
    const views = base.map((v) => ({ ...v, inFlight: v.id === affinity ? load : others[o++] }));
    return { views, affinity };
  }

  it('GIVEN affinity in-flight = threshold - 1 THEN the request stays on the affinity instance', () => {
    const { views, affinity } = withAffinityLoad(threshold - 1, [0, 0, 0]);
    expect(policy(threshold).decide(chatRequest(text), snapshot(views))).toEqual({
      instance: affinity,
      reason: 'prefix-affinity',
    });
  });

  it('GIVEN affinity in-flight = threshold THEN the request spills to the instance with the fewest in flight', () => {
    const { views, affinity } = withAffinityLoad(threshold, [3, 1, 2]);
    const decision = policy(threshold).decide(chatRequest(text), snapshot(views));
    expect(decision.reason).toBe('threshold-spill');
    expect(decision.instance).not.toBe(affinity);
    expect(views.find((v) => v.id === decision.instance)!.inFlight).toBe(1);
  });

  it('GIVEN every instance at the threshold THEN the least loaded one is used with reason all-saturated', () => {
    const { views } = withAffinityLoad(threshold + 3, [threshold + 1, threshold, threshold + 2]);
    const decision = policy(threshold).decide(chatRequest(text), snapshot(views));
    expect(decision.reason).toBe('all-saturated');
    expect(views.find((v) => v.id === decision.instance)!.inFlight).toBe(threshold);
  });

  it('GIVEN any loads THEN the choice follows the rule: affinity below threshold, else fewest in flight, ties by rendezvous rank', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ load: fc.integer({ min: 0, max: 10 }), healthy: fc.boolean() }), {
          minLength: 1,
          maxLength: 10,
        }),
        fc.string({ maxLength: 50 }),
        fc.integer({ min: 1, max: 8 }),
        (specs, prompt, t) => {
          fc.pre(specs.some((s) => s.healthy));
          const views = specs.map((s, i) => ({ id: `i${i}`, healthy: s.healthy, inFlight: s.load }));
          const p = policy(t);
          const request = chatRequest(prompt);
          const ranking = rendezvousRanking(p.routingKey(request), views);
          const decision = p.decide(request, snapshot(views));
          const chosen = views.find((v) => v.id === decision.instance)!;
          expect(chosen.healthy).toBe(true);
          if (ranking[0].inFlight < t) {
            expect(decision).toEqual({ instance: ranking[0].id, reason: 'prefix-affinity' });
          } else {
            const min = Math.min(...ranking.map((v) => v.inFlight));
            const firstLeast = ranking.find((v) => v.inFlight === min)!;
            expect(decision).toEqual({
              instance: firstLeast.id,
              reason: min < t ? 'threshold-spill' : 'all-saturated',
            });
          }
        },
      ),
    );
  });
});

describe('when instances are ejected', () => {
  it('GIVEN any health pattern with one healthy instance or more THEN no policy ever chooses an ejected instance', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ healthy: fc.boolean(), load: fc.integer({ min: 0, max: 5 }) }), {
          minLength: 1,
          maxLength: 12,
        }),
        fc.constantFrom(...POLICY_NAMES),
        fc.string({ maxLength: 100 }),
        fc.nat(),
        (specs, name, text, seed) => {
          fc.pre(specs.some((s) => s.healthy));
          const views = specs.map((s, i) => ({
            id: `b${i}`,
            healthy: s.healthy,
            inFlight: s.load,
            engine: { cachedPromptTokens: 0, queue: IDLE_ENGINE_QUEUE }, // read by oracle and llm-d-precise only
          }));
          const p = createPolicy({ name }, { rng: new SeededRng(seed) });
          for (let k = 0; k < 5; k++) {
            const request = chatRequest(`${text}${k}`);
            const decision = p.decide(request, snapshot(views));
            expect(views.find((v) => v.id === decision.instance)?.healthy).toBe(true);
            p.commit(request, decision);
          }
        },
      ),
    );
  });

  it('GIVEN no healthy instance THEN every policy throws NoHealthyInstanceError', () => {
    const views = instances(3).map((v) => ({ ...v, healthy: false }));
    for (const name of POLICY_NAMES) {
      const p = createPolicy({ name }, { rng: new SeededRng(1) });
      expect(() => p.decide(chatRequest('x'), snapshot(views))).toThrow(NoHealthyInstanceError);
    }
    expect(() => policy().decide(chatRequest('x'), snapshot([]))).toThrow(NoHealthyInstanceError);
  });
});

describe('when the key is bytes of the body versus characters of the text', () => {
  const twoByte = fc.constantFrom('é', 'ß', 'ж', 'ñ', 'ü');
  const threeByte = fc.constantFrom('日', '本', '語', '€', '한');

  it('GIVEN multibyte text that agrees on its first prefixLength bytes only THEN body-bytes keys match and message-text keys differ', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(twoByte, threeByte), { minLength: PREFIX, maxLength: PREFIX }),
        fc.string({ minLength: 1 }),
        (chars, tail) => {
          // Keep whole characters up to the first one that crosses byte PREFIX: those agree on >= PREFIX bytes.
          let bytes = 0;
          let cut = 0;
          while (bytes < PREFIX) bytes += Buffer.byteLength(chars[cut++]);
          const shared = chars.slice(0, cut).join('');
          expect(cut).toBeLessThan(PREFIX); // multibyte: PREFIX bytes hold fewer than PREFIX characters
          const a = shared + 'A' + tail;
          const b = shared + 'B' + tail;
          const p = policy();
          expect(p.routingKey(bodyRequest(a))).toBe(p.routingKey(bodyRequest(b)));
          expect(p.routingKey(chatRequest(a))).not.toBe(p.routingKey(chatRequest(b)));
        },
      ),
      { numRuns: 50 },
    );
  });

  it('GIVEN emoji (surrogate pairs) THEN prefixLength counts characters, not UTF-16 units, and never splits a pair', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('😀', '🚀', '𝔸', 'a', '日'), { minLength: PREFIX, maxLength: PREFIX }),
        fc.string(),
        fc.string(),
        (chars, a, b) => {
          const prefix = chars.join('');
          const p = policy();
          expect(p.routingKey(chatRequest(prefix + a))).toBe(p.routingKey(chatRequest(prefix + b)));
        },
      ),
      { numRuns: 50 },
    );
  });

  it('GIVEN texts that differ at character prefixLength - 1 THEN message-text keys differ', () => {
    const base = 'x'.repeat(PREFIX - 1);
    const p = policy();
    expect(p.routingKey(chatRequest(`${base}1`))).not.toBe(p.routingKey(chatRequest(`${base}2`)));
    expect(p.routingKey(chatRequest(`${base}1tail`))).toBe(p.routingKey(chatRequest(`${base}1other`)));
  });

  it('GIVEN a body-bytes request without rawBody THEN the UTF-8 of its routing text stands in, byte-exact at the cut', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(twoByte, threeByte, fc.constantFrom('😀', 'a')), { minLength: 300, maxLength: 1200 }),
        (chars) => {
          const text = chars.join('');
          const p = policy();
          const withoutBody = { ...bodyRequest(''), rawBody: undefined, routingText: text };
          expect(p.routingKey(withoutBody)).toBe(p.routingKey(bodyRequest(Buffer.from(text, 'utf8'))));
        },
      ),
      { numRuns: 50 },
    );
  });

  it('GIVEN two bodies that differ only after prefixLength bytes THEN they route together', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: PREFIX, maxLength: PREFIX }),
        fc.uint8Array(),
        fc.uint8Array(),
        (prefix, a, b) => {
          const p = policy();
          const views = instances(5);
          expect(p.decide(bodyRequest(Buffer.concat([prefix, a])), snapshot(views)).instance).toBe(
            p.decide(bodyRequest(Buffer.concat([prefix, b])), snapshot(views)).instance,
          );
        },
      ),
      { numRuns: 50 },
    );
  });
});
