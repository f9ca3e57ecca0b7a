import * as fc from 'fast-check';
import { InstanceType } from '../../lib/index';
import { componentFitProblems, packs } from '../../lib/private/component-capacity';

describe('when copies are packed into instances', () => {
  test('GIVEN copies of one size WHEN packed THEN they fit exactly when each instance holds floor(capacity / size) of them', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 8 }),
        (size, count, bins, capacity) => {
          expect(
            packs(
              Array.from({ length: count }, () => size),
              bins,
              capacity,
            ),
          ).toBe(count <= bins * Math.floor(capacity / size));
        },
      ),
      { numRuns: 300 },
    );
  });

  test('GIVEN any copies WHEN they pack THEN their total fits the fleet and no copy is larger than an instance', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 8 }), { maxLength: 20 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 8 }),
        (items, bins, capacity) => {
          if (!packs(items, bins, capacity)) return;
          expect(items.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(bins * capacity);
          expect(items.every((i) => i <= capacity)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('when the fit of components is checked', () => {
  const fleet = {
    instanceTypeName: 'ml.g6e.12xlarge',
    gpusPerInstance: 4,
    memoryPerInstanceMiB: 393_216,
    instanceCount: 2,
  };
  const demand = (copies: number, acceleratorsPerCopy: number, memoryPerCopyMiB = 1024) => ({
    label: 'Base',
    copies,
    minCopies: copies,
    maxCopies: copies,
    acceleratorsPerCopy,
    memoryPerCopyMiB,
  });

  test('GIVEN an unknown GPU count and memory WHEN checked THEN nothing is refused', () => {
    expect(
      componentFitProblems({ instanceTypeName: 'ml.x.y', instanceCount: 1 }, [demand(100, 8, 10_000_000)]),
    ).toEqual([]);
  });

  test('GIVEN a managed minimum of 0 WHEN checked THEN the minimum fleet is not checked (nothing runs then)', () => {
    expect(componentFitProblems({ ...fleet, minInstanceCount: 0 }, [{ ...demand(2, 1), minCopies: 0 }])).toEqual([]);
  });

  test('GIVEN an oversized copy WHEN checked THEN only the per-copy problem is reported', () => {
    expect(componentFitProblems(fleet, [demand(3, 5)])).toEqual([
      'Base: acceleratorsPerCopy must be at most the 4 GPUs of one ml.g6e.12xlarge, since a copy runs on one instance (got 5)',
    ]);
  });
});

describe('when the instance catalog is read for memory', () => {
  test('GIVEN every catalog type WHEN read THEN its memory is known, a whole number of GiB, and at least 16 GiB per GPU', () => {
    for (const type of InstanceType.catalogEntries()) {
      expect({
        name: type.name,
        ok: Number.isInteger(type.memoryGiB) && type.memoryGiB! >= 16 * type.gpuCount!,
      }).toEqual({ name: type.name, ok: true });
    }
    expect(InstanceType.ML_P5_48XLARGE.memoryGiB).toBe(2048);
    expect(InstanceType.of('ml.p5.48xlarge', { gpuCount: 8 }).memoryGiB).toBe(2048);
  });
});
