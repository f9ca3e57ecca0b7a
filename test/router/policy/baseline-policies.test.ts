import fc from 'fast-check';
import { SeededRng } from '../../../router/src/common/seeded-rng';
import {
  allHealthySameModels,
  createPolicy,
  NoHealthyInstanceError,
  type InstanceView,
} from '../../../router/src/policy';
import { chatRequest, instances, snapshot } from './policy-test-helpers';

describe('when the round-robin policy routes', () => {
  it('GIVEN committed decisions THEN it cycles through healthy instances in configuration order, skipping ejected ones', () => {
    const views = instances(4).map((v, i) => ({ ...v, healthy: i !== 2 }));
    const p = createPolicy({ name: 'round-robin' }, { rng: new SeededRng(1) });
    const order: string[] = [];
    for (let k = 0; k < 6; k++) {
      const d = p.decide(chatRequest('x'), snapshot(views));
      p.commit(chatRequest('x'), d);
      order.push(d.instance);
    }
    expect(order).toEqual([views[0], views[1], views[3], views[0], views[1], views[3]].map((v) => v.id));
  });

  it('GIVEN a decision that is not committed THEN the cursor does not move', () => {
    const views = instances(3);
    const p = createPolicy({ name: 'round-robin' }, { rng: new SeededRng(1) });
    expect(p.decide(chatRequest('x'), snapshot(views)).instance).toBe(views[0].id);
    expect(p.decide(chatRequest('x'), snapshot(views)).instance).toBe(views[0].id);
  });

  it('GIVEN the last committed instance was removed from the list THEN it restarts from the first instance', () => {
    const views = instances(3);
    const p = createPolicy({ name: 'round-robin' }, { rng: new SeededRng(1) });
    p.commit(chatRequest('x'), { instance: 'gone', reason: 'round-robin' });
    expect(p.decide(chatRequest('x'), snapshot(views)).instance).toBe(views[0].id);
  });
});

describe('when the round-robin policy meets commits it did not pick, skipped commits and changing instance lists', () => {
  /** The rule as stated: the first healthy instance after the last committed one, by id, wrapping around. */
  function reference(views: readonly InstanceView[], lastCommitted: string | undefined): string | undefined {
    const at = views.findIndex((v) => v.id === lastCommitted);
    for (let k = 0; k < views.length; k++) {
      const v = views[(at + 1 + k) % views.length];
      if (v.healthy) return v.id;
    }
    return undefined;
  }

  it('GIVEN any sequence THEN every decision is the stated rule (its position guess never shows)', () => {
    const step = fc.record({
      order: fc.shuffledSubarray([0, 1, 2, 3, 4], { minLength: 1 }),
      down: fc.subarray([0, 1, 2, 3, 4]),
      act: fc.constantFrom('commit', 'skip', 'commit-other'),
      other: fc.integer({ min: 0, max: 5 }),
    });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 30 }), (steps) => {
        const p = createPolicy({ name: 'round-robin' }, { rng: new SeededRng(1) });
        let last: string | undefined;
        for (const { order, down, act, other } of steps) {
          const views = order.map((i) => ({ id: `b${i}`, healthy: !down.includes(i), inFlight: 0 }));
          const expected = reference(views, last);
          const snap = { instances: views, nowMs: 0, allHealthySameModels: allHealthySameModels(views) };
          if (expected === undefined) {
            expect(() => p.decide(chatRequest('x'), snap)).toThrow(NoHealthyInstanceError);
            continue;
          }
          const d = p.decide(chatRequest('x'), snap);
          expect(d.instance).toBe(expected);
          if (act === 'skip') continue;
          // A caller may commit a decision it made itself, naming any instance (or one no longer configured).
          const committed = act === 'commit' ? d : { instance: `b${other}`, reason: 'round-robin' };
          p.commit(chatRequest('x'), committed);
          last = committed.instance;
        }
      }),
    );
  });
});

describe('when the least-outstanding-requests policy routes', () => {
  it('GIVEN any loads THEN it picks a healthy instance with the fewest in flight', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ healthy: fc.boolean(), load: fc.integer({ min: 0, max: 6 }) }), {
          minLength: 1,
          maxLength: 10,
        }),
        fc.nat(),
        (specs, seed) => {
          fc.pre(specs.some((s) => s.healthy));
          const views = specs.map((s, i) => ({ id: `b${i}`, healthy: s.healthy, inFlight: s.load }));
          const d = createPolicy({ name: 'least-outstanding-requests' }, { rng: new SeededRng(seed) }).decide(
            chatRequest(''),
            snapshot(views),
          );
          const min = Math.min(...views.filter((v) => v.healthy).map((v) => v.inFlight));
          expect(views.find((v) => v.id === d.instance)).toMatchObject({ healthy: true, inFlight: min });
          expect(d.reason).toBe('least-outstanding');
        },
      ),
    );
  });

  it('GIVEN ties THEN the seeded rng spreads them over every tied instance, and the same seed repeats the same choices', () => {
    const views = instances(4);
    const run = (seed: number): string[] => {
      const p = createPolicy({ name: 'least-outstanding-requests' }, { rng: new SeededRng(seed) });
      return Array.from({ length: 200 }, () => p.decide(chatRequest(''), snapshot(views)).instance);
    };
    expect(run(7)).toEqual(run(7));
    expect(new Set(run(7)).size).toBe(4);
  });
});

describe('when the random policy routes', () => {
  it('GIVEN a seed THEN choices are reproducible and cover every healthy instance roughly evenly', () => {
    const views = instances(4);
    const run = (seed: number): string[] => {
      const p = createPolicy({ name: 'random' }, { rng: new SeededRng(seed) });
      return Array.from({ length: 4000 }, () => p.decide(chatRequest(''), snapshot(views)).instance);
    };
    const choices = run(11);
    expect(run(11)).toEqual(choices);
    for (const v of views) {
      const share = choices.filter((c) => c === v.id).length / choices.length;
      expect(share).toBeGreaterThan(0.2);
      expect(share).toBeLessThan(0.3);
    }
  });
});
