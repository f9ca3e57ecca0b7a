import fc from 'fast-check';
import { SERIES_COLORS, strategyColors } from '../../../router/src/report/svg-charts';

describe('when strategies get colours', () => {
  test('GIVEN the same policies in any order THEN each keeps its colour in every report', () => {
    const demo = strategyColors(['random', 'least-outstanding-requests', 'sagemaker-prefix-aware', 'cache-aware']);
    const plan = strategyColors(['cache-aware', 'sagemaker-prefix-aware', 'random']);
    expect(plan).toEqual([demo[3], demo[2], demo[0]]);
  });

  test('GIVEN two settings of one policy THEN the second gets a colour no policy owns', () => {
    const [first, second] = strategyColors(['sagemaker-prefix-aware', 'sagemaker-prefix-aware']);
    expect(first).toBe(strategyColors(['sagemaker-prefix-aware'])[0]);
    expect(second).not.toBe(first);
    expect(strategyColors(['random', 'least-outstanding-requests', 'cache-aware', 'round-robin'])).not.toContain(
      second,
    );
  });

  test('GIVEN up to as many strategies as the palette has colours THEN no two share one', () => {
    const names = ['random', 'least-outstanding-requests', 'sagemaker-prefix-aware', 'cache-aware', 'round-robin', 'x'];
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...names), { minLength: 1, maxLength: SERIES_COLORS.length }),
        (policies) => {
          const colors = strategyColors(policies);
          expect(new Set(colors).size).toBe(colors.length);
        },
      ),
    );
  });
});
