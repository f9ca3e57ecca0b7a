import fc from 'fast-check';
import { SeededRng } from '../../../router/src/common/seeded-rng';
import { createPolicy } from '../../../router/src/policy';
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
