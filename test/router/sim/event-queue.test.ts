import fc from 'fast-check';
import { EventQueue } from '../../../router/src/sim/event-queue';

describe('EventQueue', () => {
  test('GIVEN events pushed in any order WHEN popped THEN they come out by time, ties in insertion order', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 200 }), (times) => {
        const q = new EventQueue<number>();
        times.forEach((t, i) => q.push(t, i));
        const out: { timeMs: number; item: number }[] = [];
        for (let e = q.pop(); e !== undefined; e = q.pop()) out.push(e);
        const expected = times
          .map((t, i) => ({ timeMs: t, item: i }))
          .sort((a, b) => a.timeMs - b.timeMs || a.item - b.item);
        expect(out).toEqual(expected);
        expect(q.size).toBe(0);
        expect(q.peekTime()).toBe(Infinity);
      }),
    );
  });
});
