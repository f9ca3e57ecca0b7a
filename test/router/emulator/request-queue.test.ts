import fc from 'fast-check';
import { RequestQueue } from '../../../router/src/emulator/request-queue';

describe('request queue', () => {
  test('any mix of pushes, pops and removals behaves like an array model', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('back' as const), v: fc.integer() }),
      fc.record({ kind: fc.constant('front' as const), v: fc.integer() }),
      fc.record({ kind: fc.constant('pop' as const), v: fc.constant(0) }),
      fc.record({ kind: fc.constant('remove' as const), v: fc.nat() }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        const queue = new RequestQueue<{ v: number }>();
        const model: { v: number }[] = [];
        for (const o of ops) {
          if (o.kind === 'back') {
            const item = { v: o.v };
            queue.pushBack(item);
            model.push(item);
          } else if (o.kind === 'front') {
            const item = { v: o.v };
            queue.pushFront(item);
            model.unshift(item);
          } else if (o.kind === 'pop') {
            expect(queue.popFront()).toBe(model.shift());
          } else if (model.length > 0) {
            const victim = model[o.v % model.length];
            expect(queue.remove(victim)).toBe(true);
            model.splice(model.indexOf(victim), 1);
            expect(queue.remove(victim)).toBe(false);
          }
          expect(queue.length).toBe(model.length);
          expect(queue.peekFront()).toBe(model[0]);
        }
        expect([...queue]).toEqual(model);
      }),
    );
  });
});
