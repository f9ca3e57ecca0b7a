import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { runPlanCommand } from '../../../router/src/cli/plan-command';
import type { PlanReport } from '../../../router/src/plan/plan-report';
import { runPlannedApp, typeErrors } from './planned-app';

const QWEN = 'Qwen/Qwen2.5-7B-Instruct';

describe('when plan runs for Qwen2.5-7B on ml.g6e.2xlarge', () => {
  let out: string;
  let report: PlanReport;
  const printed: string[] = [];

  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), 'plan-app-'));
    ({ report } = await runPlanCommand(
      {
        model: QWEN,
        instanceType: 'ml.g6e.2xlarge',
        workload: 'long-context?duration=30&rate=1',
        slo: ['p90-ttft<=3s'],
        instances: '1..4',
        policy: ['sagemaker-prefix-aware?prefixLength=8192&concurrencyThreshold=32'],
        window: '0',
        jobs: '1',
        out,
      },
      (l) => printed.push(l),
      { write: () => true },
    ));
  }, 300_000);
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  test('THEN the app file is the first ts block of report.md and of what the terminal shows, and says why there is no autoScaling', () => {
    const app = report.construct!.snippet;
    const firstTsBlock = (text: string) => /```ts\n([\s\S]*?)\n```/.exec(text)?.[1];
    expect(firstTsBlock(readFileSync(join(out, 'report.md'), 'utf8'))).toBe(app);
    expect(firstTsBlock(printed.join('\n'))).toBe(app);
    expect(app).toContain(
      "import { InstanceType, ModelSource, PrefixAwareLlmEndpoint, RoutingStrategy } from 'cdk-prefix-aware-llm';",
    );
    expect(app).toContain('// No autoScaling: plan sized no busy and quiet windows');
    expect(app).not.toContain('autoScaling: {');
  });

  test('THEN exactly that text type-checks and synthesizes to the planned fleet, priced as plan priced it', () => {
    const app = report.construct!.snippet;
    expect(typeErrors(app)).toEqual([]);
    const [stack] = runPlannedApp(app);
    const template = Template.fromStack(stack);
    const variant = Object.values(template.findResources('AWS::SageMaker::EndpointConfig'))[0].Properties
      .ProductionVariants[0];
    expect(variant).toMatchObject({
      InstanceType: 'ml.g6e.2xlarge',
      InitialInstanceCount: report.construct!.props.instanceCount,
    });
    expect(variant.RoutingConfig).toEqual({
      RoutingStrategy: 'PREFIX_AWARE',
      PrefixAwareRoutingConfig: { PrefixLength: 8192, ConcurrencyThreshold: 32 },
    });
    expect(JSON.stringify(template.findResources('AWS::SageMaker::Model'))).toContain(QWEN);
    // The engine settings plan chose off vLLM's defaults reach the container as the DLC's SM_VLLM_* variables.
    const env = Object.values(template.findResources('AWS::SageMaker::Model'))[0].Properties.PrimaryContainer
      .Environment as Record<string, string>;
    const chosen = report.strategies[0].engineArgs!;
    const engine = report.construct!.props.engine ?? {};
    expect(env.SM_VLLM_MAX_NUM_BATCHED_TOKENS).toBe(engine.maxNumBatchedTokens?.toString());
    expect(env.SM_VLLM_LONG_PREFILL_TOKEN_THRESHOLD).toBe(engine.longPrefillTokenThreshold?.toString());
    // What is left unset is vLLM's default on an L40S (2,048 and no cap: the derived profile's own values).
    expect(engine.maxNumBatchedTokens ?? 2048).toBe(chosen['max-num-batched-tokens']);
    expect(engine.longPrefillTokenThreshold ?? 0).toBe(chosen['long-prefill-token-threshold']);
    const strategy = report.strategies.find((s) => s.minInstances === report.construct!.props.instanceCount)!;
    const monthly = `~$${Math.round(strategy.monthlyUsd!).toLocaleString('en-US')}/month at 730 h`;
    const prices = Annotations.fromStack(stack)
      .findInfo('*', Match.stringLikeRegexp('Endpoint price'))
      .map((i) => String(i.entry.data));
    expect(prices).toHaveLength(1);
    expect(prices[0]).toContain(monthly);
  });

  test('THEN a file with a missing import does not type-check (the checker is live)', () => {
    const broken = report.construct!.snippet.replace(', RoutingStrategy }', ' }');
    expect(typeErrors(broken).join('\n')).toMatch(/Cannot find name 'RoutingStrategy'/);
  });
});
