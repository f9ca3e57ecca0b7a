import { RoutingStrategy, RoutingStrategyKind } from '../../lib/index';
import { problemsFor, synth, variantOf } from './helpers';

describe('when routing is not given', () => {
  test('GIVEN no routing WHEN synthesized THEN PREFIX_AWARE renders with prefixLength 8192 and concurrencyThreshold 32', () => {
    const { template } = synth();
    expect(variantOf(template).RoutingConfig).toEqual({
      RoutingStrategy: 'PREFIX_AWARE',
      PrefixAwareRoutingConfig: { PrefixLength: 8192, ConcurrencyThreshold: 32 },
    });
  });
});

describe('when a non-prefix-aware strategy is chosen', () => {
  test('GIVEN leastOutstandingRequests WHEN synthesized THEN only RoutingStrategy renders', () => {
    const { template } = synth({ routing: RoutingStrategy.leastOutstandingRequests() });
    expect(variantOf(template).RoutingConfig).toEqual({ RoutingStrategy: 'LEAST_OUTSTANDING_REQUESTS' });
  });

  test('GIVEN random WHEN synthesized THEN only RoutingStrategy renders', () => {
    const { template } = synth({ routing: RoutingStrategy.random() });
    expect(variantOf(template).RoutingConfig).toEqual({ RoutingStrategy: 'RANDOM' });
  });

  test('GIVEN random on one instance WHEN built THEN no opt-out is needed', () => {
    expect(problemsFor({ routing: RoutingStrategy.random(), instanceCount: 1 })).toEqual([]);
  });
});

describe('when prefixLength is at or around its limits (1024–65536)', () => {
  test('GIVEN 1023 (min−1) WHEN built THEN it names the prop, the range and the value', () => {
    expect(problemsFor({ routing: RoutingStrategy.prefixAware({ prefixLength: 1023 }) })).toEqual([
      'routing.prefixLength must be between 1024 and 65536 (got 1023)',
    ]);
  });

  test('GIVEN 1024 (min) WHEN synthesized THEN it renders unchanged', () => {
    const { template } = synth({ routing: RoutingStrategy.prefixAware({ prefixLength: 1024 }) });
    expect(variantOf(template).RoutingConfig.PrefixAwareRoutingConfig.PrefixLength).toBe(1024);
  });

  test('GIVEN 65536 (max) WHEN synthesized THEN it renders unchanged', () => {
    const { template } = synth({ routing: RoutingStrategy.prefixAware({ prefixLength: 65536 }) });
    expect(variantOf(template).RoutingConfig.PrefixAwareRoutingConfig.PrefixLength).toBe(65536);
  });

  test('GIVEN 65537 (max+1) WHEN built THEN it is refused, not clamped', () => {
    expect(problemsFor({ routing: RoutingStrategy.prefixAware({ prefixLength: 65537 }) })).toEqual([
      'routing.prefixLength must be between 1024 and 65536 (got 65537)',
    ]);
  });

  test('GIVEN 2048.5 WHEN built THEN a fractional length is refused', () => {
    expect(problemsFor({ routing: RoutingStrategy.prefixAware({ prefixLength: 2048.5 }) })).toEqual([
      'routing.prefixLength must be an integer between 1024 and 65536 (got 2048.5)',
    ]);
  });
});

describe('when concurrencyThreshold is at or around its limits (1–1024)', () => {
  test('GIVEN 0 (min−1) WHEN built THEN it is refused', () => {
    expect(problemsFor({ routing: RoutingStrategy.prefixAware({ concurrencyThreshold: 0 }) })).toEqual([
      'routing.concurrencyThreshold must be between 1 and 1024 (got 0)',
    ]);
  });

  test('GIVEN 1 (min) WHEN synthesized THEN it renders unchanged', () => {
    const { template } = synth({ routing: RoutingStrategy.prefixAware({ concurrencyThreshold: 1 }) });
    expect(variantOf(template).RoutingConfig.PrefixAwareRoutingConfig.ConcurrencyThreshold).toBe(1);
  });

  test('GIVEN 1024 (max) WHEN synthesized THEN it renders unchanged', () => {
    const { template } = synth({ routing: RoutingStrategy.prefixAware({ concurrencyThreshold: 1024 }) });
    expect(variantOf(template).RoutingConfig.PrefixAwareRoutingConfig.ConcurrencyThreshold).toBe(1024);
  });

  test('GIVEN 1025 (max+1) WHEN built THEN it is refused', () => {
    expect(problemsFor({ routing: RoutingStrategy.prefixAware({ concurrencyThreshold: 1025 }) })).toEqual([
      'routing.concurrencyThreshold must be between 1 and 1024 (got 1025)',
    ]);
  });
});

describe('when both routing values are wrong', () => {
  test('GIVEN prefixLength 512 and concurrencyThreshold 2000 WHEN built THEN both problems are reported in one error', () => {
    expect(
      problemsFor({ routing: RoutingStrategy.prefixAware({ prefixLength: 512, concurrencyThreshold: 2000 }) }),
    ).toEqual([
      'routing.prefixLength must be between 1024 and 65536 (got 512)',
      'routing.concurrencyThreshold must be between 1 and 1024 (got 2000)',
    ]);
  });
});

describe('when the factories are inspected', () => {
  test('GIVEN each factory WHEN read THEN kind and values are exposed', () => {
    expect(RoutingStrategy.prefixAware()).toMatchObject({
      kind: RoutingStrategyKind.PREFIX_AWARE,
      prefixLength: 8192,
      concurrencyThreshold: 32,
      isPrefixAware: true,
    });
    expect(RoutingStrategy.random()).toMatchObject({ kind: RoutingStrategyKind.RANDOM, isPrefixAware: false });
    expect(RoutingStrategy.leastOutstandingRequests().prefixLength).toBeUndefined();
  });
});
