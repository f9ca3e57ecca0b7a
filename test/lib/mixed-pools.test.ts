import { Annotations as CoreAnnotations } from 'aws-cdk-lib';
import { InstanceType, PrefixAwareLlmWarnings, RoutingStrategy } from '../../lib/index';
import { build, warningsOf } from './helpers';

/**
 * PREFIX_AWARE hashes prefixes evenly and spills on one concurrencyThreshold, blind to each instance's speed, so a
 * fleet SageMaker fills from pools with slower GPUs overloads them (measured: docs/benchmarks.md, "Mixed fleets").
 */
const mixedWarnings = (stack: Parameters<typeof warningsOf>[0]) =>
  warningsOf(stack).filter((w) => w.includes('instancePools mixes GPUs'));

describe('when instancePools mix GPUs under PREFIX_AWARE', () => {
  test('GIVEN p5 then p4d (H100, then A100 at a third of its BF16 compute) WHEN synthesized THEN an acknowledgeable warning names both and the measurement', () => {
    const { stack } = build({
      instancePools: [InstanceType.ML_P5_48XLARGE, InstanceType.ML_P4D_24XLARGE],
      instanceCount: 7,
      endpointName: 'chat-llm',
    });
    const [warning, ...rest] = mixedWarnings(stack);
    expect(rest).toEqual([]);
    expect(warning).toContain(
      'ml.p5.48xlarge (H100 80GB, 989.4 dense BF16 TFLOPS), ml.p4d.24xlarge (A100 40GB, 312 dense BF16 TFLOPS)',
    );
    expect(warning).toContain('docs/benchmarks.md');
    expect(warning).toContain(PrefixAwareLlmWarnings.MIXED_POOLS_UNDER_PREFIX_AWARE);
  });

  test('GIVEN the warning acknowledged WHEN synthesized THEN it is gone', () => {
    const { stack, endpoint } = build({
      instancePools: [InstanceType.ML_P5_48XLARGE, InstanceType.ML_P4DE_24XLARGE],
      instanceCount: 7,
      endpointName: 'chat-llm',
    });
    CoreAnnotations.of(endpoint).acknowledgeWarning(
      PrefixAwareLlmWarnings.MIXED_POOLS_UNDER_PREFIX_AWARE,
      'p4de only as a last resort; sized for it',
    );
    expect(mixedWarnings(stack)).toEqual([]);
  });

  test('GIVEN p5 → p5e → p5en (H100 and H200: the same compute) WHEN synthesized THEN nothing is warned', () => {
    const { stack } = build({
      instancePools: [InstanceType.ML_P5_48XLARGE, InstanceType.ML_P5E_48XLARGE, InstanceType.ML_P5EN_48XLARGE],
      instanceCount: 7,
      endpointName: 'chat-llm',
    });
    expect(mixedWarnings(stack)).toEqual([]);
  });

  test('GIVEN a GPU the construct has no figure for beside a p5 WHEN synthesized THEN it warns (not known to match)', () => {
    const other = InstanceType.of('ml.g7e.48xlarge', { gpuCount: 8, gpuModel: 'RTX PRO 6000', hasLocalNvme: true });
    const { stack } = build({
      instancePools: [InstanceType.ML_P5_48XLARGE, other],
      instanceCount: 7,
      endpointName: 'chat-llm',
    });
    expect(mixedWarnings(stack)).toHaveLength(1);
    expect(mixedWarnings(stack)[0]).toContain('ml.g7e.48xlarge (RTX PRO 6000)');
  });

  test('GIVEN one pool WHEN synthesized THEN nothing is warned', () => {
    const { stack } = build({
      instancePools: [InstanceType.ML_P4D_24XLARGE],
      instanceCount: 7,
      endpointName: 'chat-llm',
    });
    expect(mixedWarnings(stack)).toEqual([]);
  });

  test('GIVEN mixed pools under RANDOM WHEN synthesized THEN nothing is warned (no prefix hashing)', () => {
    const { stack } = build({
      instancePools: [InstanceType.ML_P5_48XLARGE, InstanceType.ML_P4D_24XLARGE],
      instanceCount: 7,
      routing: RoutingStrategy.random(),
      endpointName: 'chat-llm',
    });
    expect(mixedWarnings(stack)).toEqual([]);
  });
});
