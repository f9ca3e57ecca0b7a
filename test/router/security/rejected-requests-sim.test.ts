import { builtinProfile } from '../../../router/src/emulator/engine-profile';
import { simulate } from '../../../router/src/sim/simulator';
import { parseWorkloadSpec } from '../../../router/src/workload';

/**
 * Issue 41, finding 2, in the simulator: it drives the same routing core, so a request the engine refuses puts no
 * block in cache-aware's index there either, and no later request is predicted to hit what no engine computed.
 */
describe('when every request of a shared prefix is refused in a simulation', () => {
  it('GIVEN prompts longer than the context THEN no request is predicted any cached token', () => {
    // tiny: maxModelLen 1,024; every prompt of 1,100+ tokens is refused, and they share 1,100-token prefixes.
    const workload = parseWorkloadSpec(
      'long-context?groups=1&prefixTokens=1100&suffixTokens=10..20&outputTokens=4&rate=50&count=8&seed=2',
    );
    const result = simulate({
      workload,
      policy: { name: 'cache-aware' },
      instances: 2,
      profile: builtinProfile('tiny'),
    });
    expect(result.records.map((r) => r.error)).toEqual(Array(8).fill('http_400:BadRequestError'));
    expect(result.records.map((r) => r.predictedCachedTokens ?? 0)).toEqual(Array(8).fill(0));
  });
});
