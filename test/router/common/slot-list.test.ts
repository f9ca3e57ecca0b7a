import fc from 'fast-check';
import { NO_SLOT, SlotList } from '../../../router/src/common/slot-list';

/** The list's slots from head to tail, followed by `next`, and from tail to head by `previous` (reversed). */
function walk(list: SlotList): { forward: number[]; backward: number[] } {
  const forward: number[] = [];
  for (let slot = list.head; slot !== NO_SLOT && forward.length <= list.capacity; slot = list.next(slot))
    forward.push(slot);
  const backward: number[] = [];
  for (let slot = list.tail; slot !== NO_SLOT && backward.length <= list.capacity; slot = list.previous(slot))
    backward.unshift(slot);
  return { forward, backward };
}

/** One operation on a list of slots 0…capacity−1; `pick` chooses among the slots it applies to. */
type Operation =
  | { readonly kind: 'pushTail' | 'pushHead' | 'unlink'; readonly pick: number }
  | { readonly kind: 'popHead' }
  | { readonly kind: 'grow'; readonly by: number };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ kind: fc.constantFrom('pushTail' as const, 'pushHead' as const, 'unlink' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('popHead' as const) }),
  fc.record({ kind: fc.constant('grow' as const), by: fc.integer({ min: 0, max: 3 }) }),
);

/** Applies `op` to the list and to the model (an array, head first); `capacity` is the model's. */
function apply(list: SlotList, model: number[], capacity: number, op: Operation): number {
  const outside = [...Array(capacity).keys()].filter((slot) => !model.includes(slot));
  switch (op.kind) {
    case 'pushTail':
    case 'pushHead': {
      if (outside.length === 0) return capacity;
      const slot = outside[op.pick % outside.length];
      if (op.kind === 'pushTail') {
        list.pushTail(slot);
        model.push(slot);
      } else {
        list.pushHead(slot);
        model.unshift(slot);
      }
      return capacity;
    }
    case 'unlink': {
      if (model.length === 0) return capacity;
      const at = op.pick % model.length;
      list.unlink(model[at]);
      model.splice(at, 1);
      return capacity;
    }
    case 'popHead':
      expect(list.popHead()).toBe(model.length === 0 ? NO_SLOT : model.shift());
      return capacity;
    case 'grow':
      list.grow(capacity + op.by);
      return capacity + op.by;
  }
}

describe('SlotList', () => {
  describe('when any sequence of pushes, unlinks, pops and growth runs', () => {
    test('GIVEN a plain array as the model THEN the list holds the same slots in the same order, both ways', () => {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 6 }), fc.array(operation, { maxLength: 60 }), (initial, ops) => {
          const list = new SlotList(initial);
          const model: number[] = [];
          let capacity = initial;
          for (const op of ops) {
            capacity = apply(list, model, capacity, op);
            const { forward, backward } = walk(list);
            expect(forward).toEqual(model);
            expect(backward).toEqual(model);
            expect(list.size).toBe(model.length);
            expect(list.head).toBe(model.length === 0 ? NO_SLOT : model[0]);
            expect(list.tail).toBe(model.length === 0 ? NO_SLOT : model[model.length - 1]);
            expect(list.capacity).toBe(capacity);
            list.checkLinks();
          }
        }),
        { numRuns: 400 },
      );
    });
  });

  describe('when one slot moves to the tail (unlink, then pushTail: an LRU touch)', () => {
    test('GIVEN slots 0, 1, 2 WHEN 0 is touched THEN the order is 1, 2, 0 and popHead returns 1', () => {
      const list = new SlotList(3);
      for (const slot of [0, 1, 2]) list.pushTail(slot);
      list.unlink(0);
      list.pushTail(0);
      expect(walk(list).forward).toEqual([1, 2, 0]);
      expect(list.popHead()).toBe(1);
      expect(walk(list).forward).toEqual([2, 0]);
    });
  });

  describe('when growing', () => {
    test('GIVEN a list of 2 slots in use WHEN grown to 4 THEN it keeps its order and takes slots 2 and 3', () => {
      const list = new SlotList(2);
      list.pushTail(1);
      list.pushTail(0);
      list.grow(4);
      list.pushHead(3);
      list.pushTail(2);
      expect(walk(list).forward).toEqual([3, 1, 0, 2]);
      list.checkLinks();
    });

    test('GIVEN capacity 4 WHEN grown to 3 THEN it is refused', () => {
      expect(() => new SlotList(4).grow(3)).toThrow(/cannot shrink \(from 4 to 3\)/);
    });
  });

  describe('when the capacity is out of range', () => {
    test.each([-1, 1.5, Number.NaN])('GIVEN %p THEN construction is refused, naming the value', (capacity) => {
      expect(() => new SlotList(capacity)).toThrow(`SlotList capacity must be an integer >= 0, got ${capacity}`);
    });

    test('GIVEN 0 THEN the list is empty and popHead returns NO_SLOT', () => {
      const list = new SlotList(0);
      expect(list.popHead()).toBe(NO_SLOT);
      expect(list.size).toBe(0);
      list.checkLinks();
    });
  });

  describe('when a caller breaks the contract', () => {
    test('GIVEN a slot pushed twice THEN checkLinks reports the broken links', () => {
      const list = new SlotList(3);
      list.pushTail(0);
      list.pushTail(1);
      list.pushTail(0);
      expect(() => list.checkLinks()).toThrow(/slot list/);
    });

    test('GIVEN a slot unlinked that was not in the list THEN checkLinks reports the size', () => {
      const list = new SlotList(3);
      list.pushTail(0);
      list.pushTail(1);
      list.unlink(1);
      list.unlink(1);
      expect(() => list.checkLinks()).toThrow(/slot list/);
    });
  });
});
