import { SAGEMAKER_NAME } from '../../../router/src/aws/sagemaker-names';
import fc from 'fast-check';
import {
  batchWithinLimits,
  buildAbPlan,
  deploymentFor,
  parseAbStrategies,
  planSwitch,
  rollingBatchSize,
  stepSeconds,
} from '../../../router/src/aws/ab-plan';
import { finishCommands } from '../../../router/src/aws/ab-finish';
import { classifyControlPlaneError } from '../../../router/src/aws/throttling-retry';
import { alignedWindow } from '../../../router/src/aws/cloudwatch-view';
import type { EndpointFacts } from '../../../router/src/aws/endpoint-facts';
import { copyConfigName } from '../../../router/src/aws/routing-ab';
import { splitKey, variantFor } from '../../../router/src/aws/variant-split';
import { instanceFromCustomAttributes } from '../../../router/src/aws/sagemaker-transport';
import type { WorkloadRequest } from '../../../router/src/workload/workload-request';

function facts(
  instances: number[],
  lastDeploymentConfig?: EndpointFacts['endpoint']['LastDeploymentConfig'],
  instanceType = 'ml.p5.48xlarge',
): EndpointFacts {
  return {
    endpointName: 'ep',
    status: 'InService',
    configName: 'cfg',
    endpoint: {
      $metadata: {},
      EndpointName: 'ep',
      EndpointArn: 'arn',
      EndpointStatus: 'InService',
      CreationTime: new Date(0),
      LastModifiedTime: new Date(0),
      LastDeploymentConfig: lastDeploymentConfig,
    },
    config: {
      $metadata: {},
      EndpointConfigName: 'cfg',
      EndpointConfigArn: 'arn',
      CreationTime: new Date(0),
      ProductionVariants: [],
    },
    variants: instances.map((n, i) => ({
      name: `v${i}`,
      instanceType,
      instanceCount: n,
      routing: undefined,
      modelName: 'm',
    })),
    metricPublishSeconds: 60,
  };
}

describe('when a switch is planned', () => {
  it.each([
    [2, 1],
    [7, 1],
    [20, 1],
    [21, 2],
    [40, 2],
    [41, 3],
  ])('GIVEN %i instances THEN a rolling batch is %i (the smallest count ≥ 5 %%)', (n, batch) => {
    expect(rollingBatchSize(n)).toBe(batch);
    expect(batch / n).toBeGreaterThanOrEqual(0.05);
    expect(batch / n).toBeLessThanOrEqual(0.5);
  });

  it('GIVEN one instance THEN no rolling batch fits 5–50 %', () => {
    expect(rollingBatchSize(1)).toBeUndefined();
  });

  // API_RollingUpdatePolicy: MaximumBatchSize between 5 % and 50 % of the variant's total instance count.
  it.each([
    [{ Type: 'INSTANCE_COUNT' as const, Value: 1 }, 21, false],
    [{ Type: 'INSTANCE_COUNT' as const, Value: 1 }, 20, true],
    [{ Type: 'INSTANCE_COUNT' as const, Value: 10 }, 20, true],
    [{ Type: 'INSTANCE_COUNT' as const, Value: 11 }, 20, false],
    [{ Type: 'CAPACITY_PERCENT' as const, Value: 4 }, 20, false],
    [{ Type: 'CAPACITY_PERCENT' as const, Value: 5 }, 20, true],
    [{ Type: 'CAPACITY_PERCENT' as const, Value: 50 }, 20, true],
    [{ Type: 'CAPACITY_PERCENT' as const, Value: 51 }, 20, false],
  ])('GIVEN batch %j on %i instances THEN within the documented limits is %s', (size, n, ok) => {
    expect(batchWithinLimits(size, n)).toBe(ok);
  });

  it("GIVEN the config's own timeouts THEN one step lasts download + health check + provisioning", () => {
    const config = {
      $metadata: {},
      EndpointConfigName: 'c',
      EndpointConfigArn: 'a',
      CreationTime: new Date(0),
      ProductionVariants: [
        { VariantName: 'v', ModelDataDownloadTimeoutInSeconds: 900, ContainerStartupHealthCheckTimeoutInSeconds: 1200 },
      ],
    };
    expect(stepSeconds(config)).toBe(900 + 1200 + 600);
  });

  it("GIVEN the endpoint's own INSTANCE_COUNT batch no longer fits the current count THEN it is resized, its bake time and alarms kept", () => {
    const own = {
      RollingUpdatePolicy: {
        MaximumBatchSize: { Type: 'INSTANCE_COUNT' as const, Value: 1 },
        WaitIntervalInSeconds: 120,
        MaximumExecutionTimeoutInSeconds: 3600,
      },
      AutoRollbackConfiguration: { Alarms: [{ AlarmName: 'errors' }] },
    };
    const endpoint = {
      ...facts([30], own).endpoint,
      ProductionVariants: [{ VariantName: 'v0', CurrentInstanceCount: 30 }],
    };
    const d = deploymentFor(endpoint, facts([30]).config, 2, 1);
    expect(d).toMatchObject({ style: 'rolling', source: 'endpoint', batch: 2, steps: 15, instances: 30 });
    expect(d.deploymentConfig?.AutoRollbackConfiguration).toEqual(own.AutoRollbackConfiguration);
    expect(d.deploymentConfig?.RollingUpdatePolicy).toMatchObject({
      MaximumBatchSize: { Type: 'INSTANCE_COUNT', Value: 2 },
      WaitIntervalInSeconds: 120,
      MaximumExecutionTimeoutInSeconds: 28_800,
    });
  });

  it('GIVEN one variant of 7 without its own DeploymentConfig THEN the tool rolls one instance at a time', () => {
    const p = planSwitch(facts([7]));
    expect(p).toMatchObject({ style: 'rolling', source: 'tool', extraInstances: 1, steps: 7, expectedMinutes: 140 });
    expect(p.deploymentConfig?.RollingUpdatePolicy?.MaximumExecutionTimeoutInSeconds).toBe(7 * 30 * 60);
  });

  it('GIVEN a rolling DeploymentConfig of 50 %% on 4 instances THEN it is used: 2 per batch, 2 steps', () => {
    const own = {
      RollingUpdatePolicy: {
        MaximumBatchSize: { Type: 'CAPACITY_PERCENT' as const, Value: 50 },
        WaitIntervalInSeconds: 600,
      },
    };
    expect(planSwitch(facts([4], own))).toMatchObject({
      style: 'rolling',
      source: 'endpoint',
      extraInstances: 2,
      steps: 2,
      expectedMinutes: 60,
      deploymentConfig: own,
    });
  });

  it("GIVEN one instance THEN the switch is blue/green with SageMaker's default", () => {
    expect(planSwitch(facts([1]))).toMatchObject({
      style: 'blue-green',
      source: 'sagemaker-default',
      extraInstances: 1,
      deploymentConfig: undefined,
    });
  });

  it('GIVEN two variants THEN the switch is blue/green for the whole fleet, and the reason points to --variants', () => {
    const p = planSwitch(facts([2, 2]));
    expect(p).toMatchObject({ style: 'blue-green', extraInstances: 4 });
    expect(p.why).toContain('--variants');
  });

  it('GIVEN an instance type without a list price THEN the plan says to pass --price-per-instance-hour', () => {
    const plan = buildAbPlan({
      facts: facts([2], undefined, 'ml.g5.12xlarge'),
      mode: 'switch',
      strategies: [],
      runSeconds: 60,
    });
    expect(plan.pricePerInstanceHour).toBeUndefined();
    expect(plan.priceSource).toBe('unknown: pass --price-per-instance-hour');
    expect(
      buildAbPlan({
        facts: facts([2], undefined, 'ml.g5.12xlarge'),
        mode: 'switch',
        strategies: [],
        runSeconds: 60,
        pricePerInstanceHour: 7,
      }).pricePerInstanceHour,
    ).toBe(7);
  });
});

describe('when --strategies is parsed', () => {
  it("GIVEN PREFIX_AWARE without options THEN the endpoint's current options apply", () => {
    const [s] = parseAbStrategies('PREFIX_AWARE', {
      RoutingStrategy: 'PREFIX_AWARE',
      PrefixAwareRoutingConfig: { PrefixLength: 4096, ConcurrencyThreshold: 16 },
    });
    expect(s.routing).toEqual({
      RoutingStrategy: 'PREFIX_AWARE',
      PrefixAwareRoutingConfig: { PrefixLength: 4096, ConcurrencyThreshold: 16 },
    });
  });

  it('GIVEN PREFIX_AWARE on an endpoint without it THEN the construct defaults apply, and options override one by one', () => {
    const [a, b] = parseAbStrategies('prefix_aware,PREFIX_AWARE:concurrencyThreshold=1024', {
      RoutingStrategy: 'RANDOM',
    });
    expect(a.routing.PrefixAwareRoutingConfig).toEqual({ PrefixLength: 8192, ConcurrencyThreshold: 32 });
    expect(b.routing.PrefixAwareRoutingConfig).toEqual({ PrefixLength: 8192, ConcurrencyThreshold: 1024 });
    expect(b.label).toBe('PREFIX_AWARE(prefixLength=8192,concurrencyThreshold=1024)');
  });

  it.each([
    ['RANDOM:prefixLength=2048', 'RANDOM takes no options'],
    ['prefixLength=2048', "option 'prefixLength=2048' must follow PREFIX_AWARE:"],
    ['PREFIX_AWARE:size=1', "PREFIX_AWARE option 'size' is not one of prefixLength, concurrencyThreshold"],
    ['', '--strategies must name at least one'],
  ])('GIVEN %j THEN it is refused: %s', (text, message) => {
    expect(() => parseAbStrategies(text)).toThrow(message);
  });
});

describe('when names and windows are derived', () => {
  it('GIVEN any original name THEN the copy name is at most 63 characters, valid, and distinct per index', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-zA-Z0-9](-?[a-zA-Z0-9]){0,62}$/),
        fc.integer({ min: 0, max: 20 }),
        (original, i) => {
          const name = copyConfigName(original, 'r1', i);
          expect(name.length).toBeLessThanOrEqual(63);
          expect(name).toMatch(SAGEMAKER_NAME);
          expect(name.endsWith(`-abr1-${i + 1}`)).toBe(true);
          expect(copyConfigName(original, 'r1', i + 1)).not.toBe(name);
        },
      ),
    );
  });

  it('GIVEN any window THEN the CloudWatch window covers it on whole minutes with one period', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1.7e12, max: 1.8e12 }),
        fc.integer({ min: 0, max: 6 * 3600_000 }),
        (start, length) => {
          const w = alignedWindow(start, start + length);
          expect(w.start.getTime()).toBeLessThanOrEqual(start);
          expect(w.end.getTime()).toBeGreaterThanOrEqual(start + length);
          expect(w.start.getTime() % 60_000).toBe(0);
          expect(w.periodSeconds % 60).toBe(0);
          expect(w.periodSeconds).toBe((w.end.getTime() - w.start.getTime()) / 1000);
          expect(w.end.getTime() - w.start.getTime()).toBeLessThan(length + 120_000 + 1);
        },
      ),
    );
  });
});

describe('when a workload is split between variants', () => {
  const request = (i: number, extra: Partial<WorkloadRequest>): WorkloadRequest =>
    ({
      kind: 'completion',
      prompt: 'p',
      index: i,
      id: `r${i}`,
      arrivalMs: i,
      maxTokens: 1,
      ...extra,
    }) as WorkloadRequest;

  it('GIVEN requests of one conversation or one group THEN they share a variant', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.integer({ min: 0, max: 1000 }), (conversation, group) => {
        const variants = ['A', 'B'];
        expect(variantFor(request(1, { conversationId: conversation, group: 1 }), variants)).toBe(
          variantFor(request(2, { conversationId: conversation, group: 2 }), variants),
        );
        expect(variantFor(request(3, { group }), variants)).toBe(variantFor(request(4, { group }), variants));
        expect(splitKey(request(5, { conversationId: conversation, group }))).toBe(`conversation:${conversation}`);
      }),
    );
  });

  it('GIVEN 2,000 groups THEN each of two variants gets 45–55 % of them', () => {
    let a = 0;
    for (let g = 0; g < 2000; g++) if (variantFor(request(g, { group: g }), ['A', 'B']) === 'A') a++;
    expect(a / 2000).toBeGreaterThan(0.45);
    expect(a / 2000).toBeLessThan(0.55);
  });
});

describe('when the instance is read from SageMaker Custom Attributes', () => {
  it.each([
    ['prefix-router-instance=i-0abc', 'i-0abc'],
    ['trace=1; prefix-router-instance=host-2', 'host-2'],
    ['a=b,prefix-router-instance= ip-10-0-0-1 ', 'ip-10-0-0-1'],
    ['prefix-router-instance=', undefined],
    ['other=x', undefined],
    [undefined, undefined],
  ])('GIVEN %j THEN the instance is %j', (value, expected) => {
    expect(instanceFromCustomAttributes(value)).toBe(expected);
  });
});

describe('when a control-plane error is classified', () => {
  const err = (name: string, message = '', extra: Record<string, unknown> = {}) =>
    Object.assign(new Error(message), { name, ...extra });
  it.each([
    [err('ThrottlingException', 'Rate exceeded'), 'throttling'],
    [err('ResourceLimitExceeded', 'The account-level service limit'), 'transient'],
    [err('InternalFailure', '', { $metadata: { httpStatusCode: 500 } }), 'transient'],
    [err('ServiceUnavailable', '', { $metadata: { httpStatusCode: 503 } }), 'transient'],
    [err('Error', 'socket hang up', { code: 'ECONNRESET' }), 'transient'],
    [err('TimeoutError', 'socket hang up'), 'transient'],
    [err('ValidationException', 'Cannot update in-progress endpoint'), 'in-progress'],
    [err('ExpiredTokenException', 'The security token included in the request is expired'), 'credentials'],
    [err('ValidationException', 'Could not find endpoint configuration "x".'), 'permanent'],
    [err('AccessDeniedException', 'not authorized', { $metadata: { httpStatusCode: 400 } }), 'permanent'],
  ])('GIVEN %s THEN it is %s', (e, kind) => {
    expect(classifyControlPlaneError(e)).toBe(kind);
  });
});

describe('when the finishing commands are written', () => {
  const base = { endpointName: 'ep', originalConfig: 'cfg', copies: ['cfg-abx-1'], deploymentConfig: undefined };
  it('GIVEN a deployment in progress THEN they wait for it first, then switch back, wait, check and delete the copies', () => {
    expect(finishCommands({ ...base, status: 'Updating' })).toEqual([
      'aws sagemaker wait endpoint-in-service --endpoint-name ep   # let a deployment in progress end first',
      'aws sagemaker update-endpoint --endpoint-name ep --endpoint-config-name cfg --retain-all-variant-properties',
      'aws sagemaker wait endpoint-in-service --endpoint-name ep',
      "aws sagemaker describe-endpoint --endpoint-name ep --query '[EndpointStatus,EndpointConfigName,PendingDeploymentSummary]'   # expect InService, cfg, null",
      'aws sagemaker delete-endpoint-config --endpoint-config-name cfg-abx-1',
    ]);
  });
  it('GIVEN UpdateRollbackFailed THEN another UpdateEndpoint fixes it (no wait first)', () => {
    expect(finishCommands({ ...base, status: 'UpdateRollbackFailed' })[0]).toBe(
      'aws sagemaker update-endpoint --endpoint-name ep --endpoint-config-name cfg --retain-all-variant-properties',
    );
  });
  it('GIVEN Failed THEN the endpoint is deleted and created again on the original (DeleteEndpoint is all a Failed endpoint allows)', () => {
    expect(finishCommands({ ...base, status: 'Failed' }).slice(0, 3)).toEqual([
      'aws sagemaker delete-endpoint --endpoint-name ep',
      'aws sagemaker wait endpoint-deleted --endpoint-name ep',
      'aws sagemaker create-endpoint --endpoint-name ep --endpoint-config-name cfg',
    ]);
  });
  it('GIVEN the original configuration is gone THEN it is recreated from the saved file first', () => {
    expect(
      finishCommands({ ...base, status: 'InService', recreateFrom: '/tmp/out dir/original-endpoint-config.json' })[0],
    ).toBe("aws sagemaker create-endpoint-config --cli-input-json 'file:///tmp/out dir/original-endpoint-config.json'");
  });
});
