import { SeededRng } from '../../../router/src/common/seeded-rng';
import {
  createPolicy,
  DEFAULT_CONCURRENCY_THRESHOLD,
  DEFAULT_PREFIX_LENGTH,
  POLICY_NAMES,
  PolicyConfigError,
  SageMakerPrefixAwarePolicy,
  type PolicyConfig,
} from '../../../router/src/policy';

const deps = { rng: new SeededRng(1) };

function problemsOf(config: unknown): string {
  try {
    createPolicy(config as PolicyConfig, deps);
  } catch (err) {
    expect(err).toBeInstanceOf(PolicyConfigError);
    return (err as Error).message;
  }
  throw new Error('expected createPolicy to throw');
}

describe('when createPolicy validates sagemaker-prefix-aware options', () => {
  it.each([1024, 65536])('GIVEN prefixLength %i THEN it is accepted', (prefixLength) => {
    const p = createPolicy({ name: 'sagemaker-prefix-aware', prefixLength }, deps) as SageMakerPrefixAwarePolicy;
    expect(p.options.prefixLength).toBe(prefixLength);
  });

  it.each([1023, 65537, 2048.5])(
    'GIVEN prefixLength %d THEN it is rejected naming the option and range',
    (prefixLength) => {
      expect(problemsOf({ name: 'sagemaker-prefix-aware', prefixLength })).toContain(
        `prefixLength must be an integer between 1024 and 65536 (got ${prefixLength})`,
      );
    },
  );

  it.each([1, 1024])('GIVEN concurrencyThreshold %i THEN it is accepted', (concurrencyThreshold) => {
    const p = createPolicy(
      { name: 'sagemaker-prefix-aware', concurrencyThreshold },
      deps,
    ) as SageMakerPrefixAwarePolicy;
    expect(p.options.concurrencyThreshold).toBe(concurrencyThreshold);
  });

  it.each([0, 1025])(
    'GIVEN concurrencyThreshold %i THEN it is rejected naming the option and range',
    (concurrencyThreshold) => {
      expect(problemsOf({ name: 'sagemaker-prefix-aware', concurrencyThreshold })).toContain(
        `concurrencyThreshold must be an integer between 1 and 1024 (got ${concurrencyThreshold})`,
      );
    },
  );

  it('GIVEN both options wrong THEN both problems are reported at once', () => {
    const message = problemsOf({ name: 'sagemaker-prefix-aware', prefixLength: '4096', concurrencyThreshold: -1 });
    expect(message).toContain('prefixLength must be an integer between 1024 and 65536 (got "4096")');
    expect(message).toContain('concurrencyThreshold must be an integer between 1 and 1024 (got -1)');
  });

  it('GIVEN no options THEN the documented defaults apply', () => {
    const p = createPolicy({ name: 'sagemaker-prefix-aware' }, deps) as SageMakerPrefixAwarePolicy;
    expect(p.options).toEqual({
      prefixLength: DEFAULT_PREFIX_LENGTH,
      concurrencyThreshold: DEFAULT_CONCURRENCY_THRESHOLD,
    });
  });
});

describe('when createPolicy gets a wrong policy', () => {
  it('GIVEN an unknown name THEN the message lists the known names', () => {
    expect(problemsOf({ name: 'fastest' })).toContain(`name must be one of ${POLICY_NAMES.join(', ')} (got "fastest")`);
  });

  it('GIVEN an option another policy owns THEN it is rejected instead of ignored', () => {
    expect(problemsOf({ name: 'random', prefixLength: 2048 })).toContain(
      'prefixLength is not an option of policy random (got 2048)',
    );
  });

  it.each(POLICY_NAMES)('GIVEN %s with no options THEN a policy with that name is built', (name) => {
    expect(createPolicy({ name }, deps).name).toBe(name);
  });
});
