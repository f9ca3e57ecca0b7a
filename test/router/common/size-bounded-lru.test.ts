import fc from 'fast-check';
import { SizeBoundedLru } from '../../../router/src/common/size-bounded-lru';

describe('SizeBoundedLru', () => {
  test('GIVEN any sequence of gets and sets THEN it keeps exactly the most recently used entries that fit, within budget', () => {
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('set' as const),
        key: fc.integer({ min: 0, max: 7 }),
        size: fc.integer({ min: 0, max: 12 }),
      }),
      fc.record({ kind: fc.constant('get' as const), key: fc.integer({ min: 0, max: 7 }) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 30 }), fc.array(op, { maxLength: 80 }), (maxSize, ops) => {
        const lru = new SizeBoundedLru<number, { size: number }>(maxSize, (v) => v.size);
        // Model: entries in recency order, least recent first.
        let model: Array<{ key: number; size: number }> = [];
        for (const o of ops) {
          if (o.kind === 'get') {
            const found = model.find((e) => e.key === o.key);
            expect(lru.get(o.key)?.size).toBe(found?.size);
            if (found) model = [...model.filter((e) => e.key !== o.key), found];
          } else {
            model = model.filter((e) => e.key !== o.key);
            expect(lru.set(o.key, { size: o.size })).toBe(o.size <= maxSize);
            if (o.size <= maxSize) model.push({ key: o.key, size: o.size });
            while (model.reduce((sum, e) => sum + e.size, 0) > maxSize) model.shift();
          }
          expect(lru.count).toBe(model.length);
          expect(lru.size).toBe(model.reduce((sum, e) => sum + e.size, 0));
          expect(lru.size).toBeLessThanOrEqual(maxSize);
        }
      }),
      { numRuns: 300 },
    );
  });

  test('GIVEN a negative budget THEN it is refused', () => {
    expect(() => new SizeBoundedLru<string, string>(-1, (v) => v.length)).toThrow(/maxSize/);
  });
});
