import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { ConfigError } from '../../../router/src/common/config-error';
import {
  BUILT_IN_PRICE_SOURCE,
  parseInstanceRange,
  parsePlanFlags,
  runPlanCommand,
} from '../../../router/src/cli/plan-command';
import type { PlanReport } from '../../../router/src/plan/plan-report';
import { SloError } from '../../../router/src/plan/slo';
import { runPlannedApp } from './planned-app';

const WORKLOAD = 'long-context?duration=60&rate=4';

describe('when plan flags are read', () => {
  test.each(['0..4', '5..2', '3', 'a..b', '1..1025', '1..2..3'])(
    'GIVEN --instances %p THEN it is refused, naming the flag and the range',
    (raw) => {
      expect(() => parseInstanceRange(raw)).toThrow(ConfigError);
      expect(() => parseInstanceRange(raw)).toThrow(
        '--instances must be MIN..MAX, whole numbers between 1 and 1024 with MIN ≤ MAX',
      );
    },
  );

  test('GIVEN the bounds 1..1 and 1024..1024 THEN they are accepted', () => {
    expect(parseInstanceRange('1..1')).toEqual({ min: 1, max: 1 });
    expect(parseInstanceRange('1024..1024')).toEqual({ min: 1024, max: 1024 });
  });

  test('GIVEN no --slo, or one that does not parse THEN the error names the part and the grammar', () => {
    expect(() => parsePlanFlags({ workload: WORKLOAD })).toThrow(SloError);
    expect(() => parsePlanFlags({ workload: WORKLOAD, slo: ['p90-ttft<=2'] })).toThrow('has no unit (ms or s)');
  });

  test('GIVEN an instance type without a built-in price THEN --price-per-instance-hour is asked for; given one, it is the source', () => {
    expect(() =>
      parsePlanFlags({ workload: WORKLOAD, slo: ['p90-ttft<=2s'], profile: 'tiny', instanceType: 'ml.g7e.48xlarge' }),
    ).toThrow('--price-per-instance-hour is required for ml.g7e.48xlarge');
    const flags = parsePlanFlags({
      workload: WORKLOAD,
      slo: ['p90-ttft<=2s'],
      profile: 'tiny',
      instanceType: 'ml.g7e.48xlarge',
      pricePerInstanceHour: '40.5',
    });
    expect(flags.price).toEqual({ usdPerInstanceHour: 40.5, source: 'given with --price-per-instance-hour' });
    expect(parsePlanFlags({ workload: WORKLOAD, slo: ['p90-ttft<=2s'] }).price).toEqual({
      usdPerInstanceHour: 63,
      source: BUILT_IN_PRICE_SOURCE,
    });
  });

  test('GIVEN no strategies THEN the defaults are RANDOM, least outstanding requests, cache-aware and a 3 × 3 PREFIX_AWARE sweep; a policy named twice is refused', () => {
    const flags = parsePlanFlags({ workload: WORKLOAD, slo: ['p90-ttft<=2s'] });
    expect(flags.strategies.map((s) => [s.label, s.configs.length])).toEqual([
      ['random', 1],
      ['least-outstanding-requests', 1],
      ['cache-aware', 1],
      ['sagemaker-prefix-aware (best of 9 settings)', 9],
    ]);
    expect(() =>
      parsePlanFlags({
        workload: WORKLOAD,
        slo: ['p90-ttft<=2s'],
        policy: ['sagemaker-prefix-aware?prefixLength=8192&concurrencyThreshold=32'],
        sweep: ['sagemaker-prefix-aware?prefixLength=8192&concurrencyThreshold=8,32'],
      }),
    ).toThrow('name sagemaker-prefix-aware?prefixLength=8192&concurrencyThreshold=32 twice');
  });
});

describe('when plan runs end to end', () => {
  let out: string;
  let report: PlanReport;
  const printed: string[] = [];

  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), 'plan-'));
    ({ report } = await runPlanCommand(
      {
        workload: 'long-context?duration=120&rate=4',
        slo: ['p90-ttft<=800ms', 'error-rate<=1%'],
        instances: '1..8',
        sweep: ['sagemaker-prefix-aware?prefixLength=2048,8192&concurrencyThreshold=8,32'],
        policy: ['random', 'cache-aware'],
        window: '30',
        // In this thread: a worker thread under ts-jest compiles the simulator again (seconds of CPU each, per
        // round of the search); plan's worker threads are checked against this thread in planner.test.ts.
        jobs: '1',
        // The engine grid has its own tests (planner.test.ts, planned-app.test.ts); this one is about the report.
        engineSearch: 'off',
        out,
      },
      (l) => printed.push(l),
      { write: () => true },
    ));
    // A whole plan: dozens of simulations.
  }, 300_000);
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  test('THEN report.json holds, per strategy, minInstances and the figures at that size, with the monthly bill at 730 h', () => {
    const json = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as PlanReport;
    expect(json.schema).toBe('cdk-prefix-aware-llm/plan-report');
    for (const s of json.strategies) {
      if (s.minInstances === null) {
        expect(s.bestAtLargest?.instances).toBe(8);
        continue;
      }
      expect(s.atMin).toMatchObject({ instances: s.minInstances });
      expect(s.atMin!.slo['p90-ttft']).toBeLessThanOrEqual(800);
      expect(s.atMin!.slo['error-rate']).toBeLessThanOrEqual(0.01);
      expect(s.monthlyUsd).toBeCloseTo(s.minInstances * 63 * 730);
      expect(s.atMin!.instanceShares).toHaveLength(s.minInstances);
      expect(s.atMin!.instanceShares.reduce((a, b) => a + b, 0)).toBeCloseTo(1);
    }
    expect(json).toEqual(JSON.parse(JSON.stringify(report)));
  });

  test('THEN the markdown and the HTML page (one chart per SLO, the bound drawn) are written, and the terminal gets the answer', () => {
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toContain('| strategy | fewest instances | monthly cost |');
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html.match(/<svg /g)).toHaveLength(2);
    expect(html).toContain('SLO p90-ttft&lt;=800ms');
    expect(printed.join('\n')).toContain('## CDK app');
    expect(printed.join('\n')).toContain(`report: ${join(out, 'report.html')}`);
  });

  test('THEN the printed app file synthesizes to that routing, count and autoscaling', () => {
    const suggestion = report.construct!;
    expect(suggestion).not.toBeNull();
    expect(suggestion.props.autoScaling).toEqual({ minCapacity: 2, maxCapacity: 3 });
    const [stack] = runPlannedApp(suggestion.snippet);
    expect(stack).toBeInstanceOf(Stack);
    const template = Template.fromStack(stack);
    const variant = Object.values(template.findResources('AWS::SageMaker::EndpointConfig'))[0].Properties
      .ProductionVariants[0];
    expect(variant.InitialInstanceCount).toBe(suggestion.props.instanceCount);
    expect(variant.RoutingConfig.RoutingStrategy).toBe(suggestion.props.routing.kind);
    if (suggestion.props.routing.kind === 'PREFIX_AWARE') {
      expect(variant.RoutingConfig.PrefixAwareRoutingConfig).toEqual({
        PrefixLength: suggestion.props.routing.prefixLength,
        ConcurrencyThreshold: suggestion.props.routing.concurrencyThreshold,
      });
    }
    if (suggestion.props.autoScaling) {
      const target = Object.values(template.findResources('AWS::ApplicationAutoScaling::ScalableTarget'))[0].Properties;
      expect(target).toMatchObject({
        MinCapacity: suggestion.props.autoScaling.minCapacity,
        MaxCapacity: suggestion.props.autoScaling.maxCapacity,
      });
    }
  });
});

describe('when plan compares peer routers as strategies', () => {
  let out: string;
  let report: PlanReport;

  beforeAll(async () => {
    out = mkdtempSync(join(tmpdir(), 'plan-peers-'));
    ({ report } = await runPlanCommand(
      {
        workload: 'shared-system?count=64',
        slo: ['p90-ttft<=1s'],
        instances: '1..3',
        sweep: [],
        policy: ['cache-aware', 'llm-d', 'smg-cache-aware', 'oracle'],
        window: '0',
        jobs: '1',
        engineSearch: 'off',
        out,
      },
      () => undefined,
      { write: () => true },
    ));
  }, 120_000);
  afterAll(() => rmSync(out, { recursive: true, force: true }));

  test('THEN each peer is sized like any strategy, with its own runs', () => {
    expect(report.strategies.map((s) => s.label)).toEqual(['cache-aware', 'llm-d', 'smg-cache-aware', 'oracle']);
    for (const s of report.strategies) {
      expect(s.curve.length).toBeGreaterThan(0);
      expect(s.curve.every((f) => f.policy === s.label)).toBe(true);
    }
  });

  test('THEN oracle, which serve refuses, is marked simulator only in the JSON, the tables and the notes; the others are not', () => {
    const oracle = report.strategies.find((s) => s.label === 'oracle')!;
    expect(oracle.simulatorOnly).toContain('only the simulator');
    for (const s of report.strategies.filter((x) => x !== oracle)) expect(s.simulatorOnly).toBeNull();
    const markdown = readFileSync(join(out, 'report.md'), 'utf8');
    expect(markdown).toContain('| oracle (simulator only) |');
    expect(markdown).toContain('- oracle is simulator only, a reference to size against, not a router to deploy');
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('<td>oracle (simulator only)</td>');
  });
});
