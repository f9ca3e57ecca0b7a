import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parsePolicySpec } from '../policy/policy-spec';
import { formatMs, formatNumber, formatPercent } from '../report/format';
import { REPORT_STYLE } from '../report/render-html';
import { escapeXml, sizeCurveChart, strategyColors } from '../report/svg-charts';
import {
  HOURS_PER_MONTH,
  recommendedSageMakerStrategy,
  type AutoscalingPlan,
  type PlanResult,
  type SizedRun,
  type StrategyPlan,
} from './planner';
import type { NonMonotonePoint } from './size-search';
import type { EngineArgs } from '../emulator/engine-args';
import { ENGINE_GRID_FLAGS } from './engine-grid';
import { formatSloValue, sloFigure, sloValue, type Slo } from './slo';

export const PLAN_REPORT_SCHEMA = 'cdk-prefix-aware-llm/plan-report';

/** The price one instance-hour is billed at, and where that figure comes from. */
export interface InstancePrice {
  readonly usdPerInstanceHour: number;
  readonly source: string;
}

/** What a run measured at one size, as report.json holds it. */
export interface PlanFigures {
  readonly instances: number;
  /** The policy spec that ran (for a sweep, the best setting at this size). */
  readonly policy: string;
  /** The engine settings it ran with (the grid's searched arguments, by vLLM flag name). */
  readonly engineArgs: EngineArgs;
  /** Worst SLO ratio (≤ 1 meets every SLO). */
  readonly sloMargin: number;
  readonly slo: Readonly<Record<string, number | null>>;
  readonly ttftMs: { readonly p50: number | null; readonly p90: number | null; readonly p99: number | null };
  readonly e2eMs: { readonly p50: number | null; readonly p90: number | null; readonly p99: number | null };
  readonly errorRate: number | null;
  readonly hitRate: number | null;
  readonly fleetCeiling: number | null;
  readonly hitRateOfFleetCeiling: number | null;
  readonly requestsPerSecond: number | null;
  readonly outputTokensPerSecond: number | null;
  /** Each instance's share of the requests (0–1), in instance order. */
  readonly instanceShares: readonly number[];
  /** The busiest instance's share of requests (0–1), and busiest ÷ mean. */
  readonly maxInstanceShare: number | null;
  readonly requestsMaxOverMean: number | null;
}

/** Instances and money one strategy saves against another; `atLeast` when the other meets no SLO in range. */
export interface Saving {
  readonly against: string;
  readonly instances: number;
  readonly monthlyUsd: number;
  readonly atLeast: boolean;
}

export interface StrategyPlanReport {
  readonly label: string;
  readonly sweep: string | null;
  readonly sagemakerRouting: string | null;
  /** Why `serve` refuses this strategy's policy (a simulator-only reference such as oracle); null when serve runs it. */
  readonly simulatorOnly: string | null;
  /** Fewest instances meeting every SLO in range; null when unreachable there. */
  readonly minInstances: number | null;
  readonly unreachableReason: string | null;
  readonly atMin: PlanFigures | null;
  /** When unreachable: the best this strategy achieved at the largest size measured. */
  readonly bestAtLargest: PlanFigures | null;
  readonly monthlyUsd: number | null;
  readonly savings: readonly Saving[];
  readonly curve: readonly PlanFigures[];
  readonly nonMonotone: readonly NonMonotonePoint[];
  /** The engine settings chosen at `minInstances` (null when unreachable). */
  readonly engineArgs: EngineArgs | null;
  /** Fewest instances with the profile's engine settings, to compare with `minInstances`. */
  readonly baseEngineMinInstances: number | null;
  /** What each chosen argument off the profile's value bought at `minInstances`: the SLO figures with and without it. */
  readonly engineEffects: readonly EngineEffectReport[];
}

export interface EngineEffectReport {
  readonly flag: string;
  readonly value: number | string;
  readonly profileValue: number | string;
  readonly instances: number;
  readonly slo: Readonly<Record<string, number | null>>;
  /** The same run with only this argument at the profile's value; null when that run was not measured. */
  readonly sloWithout: Readonly<Record<string, number | null>> | null;
}

export interface ConstructSuggestion {
  readonly strategy: string;
  readonly props: {
    readonly instanceCount: number;
    readonly routing: { readonly kind: string; readonly prefixLength?: number; readonly concurrencyThreshold?: number };
    readonly autoScaling?: { readonly minCapacity: number; readonly maxCapacity: number };
    /** The scheduler settings off vLLM's defaults that the plan chose (the construct's `engine` options). */
    readonly engine?: { readonly maxNumBatchedTokens?: number; readonly longPrefillTokenThreshold?: number };
  };
  /** The props as TypeScript to paste into a stack. */
  readonly snippet: string;
}

export interface PlanReport {
  readonly schema: typeof PLAN_REPORT_SCHEMA;
  readonly schemaVersion: 1;
  readonly createdAt: string;
  readonly workload: { readonly spec: string; readonly description: string };
  readonly profile: string;
  readonly instanceType: string;
  readonly slos: readonly string[];
  readonly instances: { readonly min: number; readonly max: number };
  readonly price: InstancePrice;
  readonly hoursPerMonth: number;
  /** The engine settings searched (docs/plan.md#engine-settings): one `NAME=VALUE&…` per point, the profile's first. */
  readonly engineGrid: readonly string[];
  readonly strategies: readonly StrategyPlanReport[];
  readonly construct: ConstructSuggestion | null;
  readonly autoscaling: AutoscalingPlan | null;
  readonly runs: number;
  readonly wallSeconds: number;
  readonly notes: readonly string[];
}

export interface PlanReportInput {
  readonly result: PlanResult;
  readonly slos: readonly Slo[];
  readonly workload: { readonly spec: string; readonly description: string };
  readonly profile: string;
  readonly instanceType: string;
  readonly instances: { readonly min: number; readonly max: number };
  readonly price: InstancePrice;
  /** The model and engine settings the printed app file states. */
  readonly deployment: PlanDeployment;
  /** The engine grid's points (`NAME=VALUE&…`), the profile's first. */
  readonly engineGrid: readonly string[];
  readonly createdAt?: string;
}

/** The report's notes: simulator-only strategies, sweeps, sizes measured again, an unbounded error rate. */
function planNotes(strategies: readonly StrategyPlanReport[], slos: readonly Slo[]): string[] {
  const notes: string[] = [];
  for (const s of strategies)
    if (s.simulatorOnly !== null)
      notes.push(
        `${s.label} is simulator only, a reference to size against, not a router to deploy: serve refuses it (${s.simulatorOnly}).`,
      );
  for (const s of strategies)
    if (s.sweep !== null)
      notes.push(`${s.label}: the settings of \`--sweep '${s.sweep}'\`, the best that meets every SLO at each size.`);
  for (const s of strategies) {
    for (const p of s.nonMonotone)
      notes.push(
        `${s.label}: ${p.smaller} instances met every SLO but ${p.larger} did not (more instances were worse here), so every smaller size was measured as well.`,
      );
  }
  if (!slos.some((slo) => slo.kind === 'error-rate'))
    notes.push('No error-rate SLO was given: the error rate is shown, not bounded.');
  return notes;
}

export function buildPlanReport(input: PlanReportInput): PlanReport {
  const { result, slos, price } = input;
  const monthly = (n: number) => n * price.usdPerInstanceHour * HOURS_PER_MONTH;
  const random = result.strategies.find((s) => s.label === 'random');
  const bestSageMaker = result.strategies.find((s) => s.sagemakerRouting === 'PREFIX_AWARE');
  const savingAgainst = (s: StrategyPlan, other: StrategyPlan | undefined): Saving | null => {
    if (other === undefined || other === s || s.minInstances === null || other.outOfBudget) return null;
    const atLeast = other.minInstances === null;
    const theirs = other.minInstances ?? input.instances.max + 1;
    return {
      against: other.label,
      instances: theirs - s.minInstances,
      monthlyUsd: monthly(theirs - s.minInstances),
      atLeast,
    };
  };
  const strategies = result.strategies.map((s): StrategyPlanReport => ({
    label: s.label,
    sweep: s.sweep,
    sagemakerRouting: s.sagemakerRouting,
    simulatorOnly: s.simulatorOnly,
    minInstances: s.minInstances,
    unreachableReason:
      s.minInstances !== null
        ? null
        : s.outOfBudget
          ? 'the run budget (--max-runs) ran out before the search finished'
          : `no size from ${s.searchedFrom} to ${input.instances.max} instances meets every SLO`,
    atMin: s.atMin === null ? null : figuresOf(s.atMin, slos),
    bestAtLargest: s.minInstances === null && s.bestAtLargest !== null ? figuresOf(s.bestAtLargest, slos) : null,
    monthlyUsd: s.minInstances === null ? null : monthly(s.minInstances),
    savings: [savingAgainst(s, random), savingAgainst(s, bestSageMaker)].filter((x): x is Saving => x !== null),
    curve: s.curve.map((r) => figuresOf(r, slos)),
    nonMonotone: s.nonMonotone,
    engineArgs: s.atMin?.engineArgs ?? null,
    baseEngineMinInstances: s.baseEngineMinInstances,
    engineEffects: s.engineEffects.map((e) => ({
      flag: e.flag,
      value: e.value,
      profileValue: e.profileValue,
      instances: s.atMin!.instances,
      slo: figuresOf(s.atMin!, slos).slo,
      sloWithout: e.without === null ? null : figuresOf(e.without, slos).slo,
    })),
  }));
  const notes = planNotes(strategies, slos);
  return {
    schema: PLAN_REPORT_SCHEMA,
    schemaVersion: 1,
    createdAt: input.createdAt ?? new Date().toISOString(),
    workload: input.workload,
    profile: input.profile,
    instanceType: input.instanceType,
    slos: slos.map((s) => s.text),
    instances: input.instances,
    price,
    hoursPerMonth: HOURS_PER_MONTH,
    engineGrid: input.engineGrid,
    strategies,
    construct: constructSuggestion(input),
    autoscaling: result.autoscaling,
    runs: result.runs,
    wallSeconds: Math.round(result.wallMs / 100) / 10,
    notes,
  };
}

function figuresOf(run: SizedRun, slos: readonly Slo[]): PlanFigures {
  const s = run.summary;
  const shares = s.instances.map((i) => i.share);
  return {
    instances: run.instances,
    policy: run.policy,
    engineArgs: run.engineArgs,
    sloMargin: Number.isFinite(run.margin) ? run.margin : Number.MAX_VALUE,
    slo: Object.fromEntries(slos.map((slo) => [sloFigure(slo), sloValue(slo, s)])),
    ttftMs: { p50: s.ttftMs.p50, p90: s.ttftMs.p90, p99: s.ttftMs.p99 },
    e2eMs: { p50: s.e2eMs.p50, p90: s.e2eMs.p90, p99: s.e2eMs.p99 },
    errorRate: s.requests === 0 ? null : s.errors / s.requests,
    hitRate: s.cacheHitRate.engineReported ?? s.cacheHitRate.prometheus,
    fleetCeiling: s.cacheHitRate.fleetCeiling,
    hitRateOfFleetCeiling: s.cacheHitRate.ofFleetCeiling,
    requestsPerSecond: s.throughput.requestsPerSecond,
    outputTokensPerSecond: s.throughput.outputTokensPerSecond,
    instanceShares: shares,
    maxInstanceShare: shares.length === 0 ? null : Math.max(...shares),
    requestsMaxOverMean: s.balance.requestsMaxOverMean,
  };
}

/** What the planned fleet runs, for the app file plan prints: the model and the engine settings it assumed. */
export interface PlanDeployment {
  /** The Hugging Face id the profile models. */
  readonly modelId: string;
  /** The tensor parallel size the profile assumed, when known (derived profiles, catalogued models). */
  readonly tensorParallelSize?: number;
  /** GPUs per instance, when the instance type is catalogued. */
  readonly gpuCount?: number;
  /** The context the profile assumed when it is below the model's own (KV-limited): vLLM needs it set. */
  readonly maxModelLen?: number;
  /** vLLM's scheduler defaults on this hardware (the profile's before --engine-arg): settings equal to them stay unset. */
  readonly vllmDefaults?: { readonly maxNumBatchedTokens: number; readonly longPrefillTokenThreshold: number };
}

/** `InstanceType.ML_G6E_2XLARGE` for a catalogued name, else `InstanceType.of('…')`. */
function instanceTypeCode(instanceType: string, catalogued: boolean): string {
  return catalogued
    ? `InstanceType.${instanceType.toUpperCase().replace(/[.-]/g, '_')}`
    : `InstanceType.of(${JSON.stringify(instanceType)})`;
}

function routingCode(routing: ConstructSuggestion['props']['routing']): string {
  if (routing.kind === 'PREFIX_AWARE')
    return `RoutingStrategy.prefixAware({ prefixLength: ${routing.prefixLength}, concurrencyThreshold: ${routing.concurrencyThreshold} })`;
  return routing.kind === 'RANDOM' ? 'RoutingStrategy.random()' : 'RoutingStrategy.leastOutstandingRequests()';
}

/** The scheduler settings of `args` that differ from vLLM's defaults, as the construct's `engine` options. */
function schedulerOptions(
  args: EngineArgs,
  defaults: PlanDeployment['vllmDefaults'],
): { maxNumBatchedTokens?: number; longPrefillTokenThreshold?: number } {
  if (defaults === undefined) return {};
  const budget = Number(args['max-num-batched-tokens']);
  const threshold = Number(args['long-prefill-token-threshold']);
  return {
    ...(budget !== defaults.maxNumBatchedTokens ? { maxNumBatchedTokens: budget } : {}),
    ...(threshold !== defaults.longPrefillTokenThreshold ? { longPrefillTokenThreshold: threshold } : {}),
  };
}

/** The engine settings the plan assumed, as the construct's `engine` prop and a comment on data parallelism. */
function engineLines(deployment: PlanDeployment, scheduler: ReturnType<typeof schedulerOptions>): string[] {
  const tp = deployment.tensorParallelSize;
  const schedulerSettings = Object.entries(scheduler).map(([k, v]) => `${k}: ${v}`);
  if (tp === undefined)
    return schedulerSettings.length === 0
      ? []
      : ['      // As simulated: vLLM scheduler settings.', `      engine: { ${schedulerSettings.join(', ')} },`];
  const settings = [
    `tensorParallelSize: ${tp}`,
    ...(deployment.maxModelLen ? [`maxModelLen: ${deployment.maxModelLen}`] : []),
    ...schedulerSettings,
  ];
  const idle =
    deployment.gpuCount !== undefined && deployment.gpuCount > tp
      ? `; ${deployment.gpuCount - tp} of ${deployment.gpuCount} GPUs idle (the model's heads allow no larger size)`
      : '';
  return [
    `      // As simulated: tensor parallel ${tp}, data parallel 1 (one engine per instance)${idle}.`,
    `      engine: { ${settings.join(', ')} },`,
  ];
}

/** Why the file sets no autoScaling, from the windows plan sized (or did not size). */
function noAutoscalingLines(a: AutoscalingPlan | null): string[] {
  if (a === null)
    return [
      '      // No autoScaling: plan sized no busy and quiet windows (--window 0), so it has no bounds to suggest.',
    ];
  const size = (which: string) => a.windows.find((w) => w.which === which)?.minInstances ?? '?';
  const why =
    a.minCapacity === null || a.maxCapacity === null
      ? a.note
      : `the quietest ${a.windowSeconds}-s window needs ${size('quietest')} instances and the busiest ${size('busiest')}, so ` +
        `minCapacity would equal maxCapacity (${a.maxCapacity}): it would scale nothing and would block a later change of instance type.`;
  return wrapComment(`No autoScaling: ${why}`, '      ');
}

function wrapComment(text: string, indent: string, width = 110): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line !== '' && indent.length + 3 + line.length + 1 + word.length > width) {
      lines.push(`${indent}// ${line}`);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(`${indent}// ${line}`);
  return lines;
}

/** The cheapest SageMaker strategy as a whole CDK app file, with the autoscaling bounds when the windows differ. */
function constructSuggestion(input: PlanReportInput): ConstructSuggestion | null {
  const { result, instanceType, deployment, price } = input;
  const chosen = recommendedSageMakerStrategy(result.strategies);
  if (chosen === undefined) return null;
  const policy = parsePolicySpec(chosen.atMin!.policy) as { prefixLength?: number; concurrencyThreshold?: number };
  const routing =
    chosen.sagemakerRouting === 'PREFIX_AWARE'
      ? { kind: 'PREFIX_AWARE', prefixLength: policy.prefixLength!, concurrencyThreshold: policy.concurrencyThreshold! }
      : { kind: chosen.sagemakerRouting! };
  const a = result.autoscaling;
  const autoScaling =
    a !== null && a.minCapacity !== null && a.maxCapacity !== null && a.minCapacity < a.maxCapacity
      ? { minCapacity: a.minCapacity, maxCapacity: a.maxCapacity }
      : undefined;
  const instanceCount = chosen.minInstances!;
  const hourly = instanceCount * price.usdPerInstanceHour;
  const scheduler = schedulerOptions(chosen.atMin!.engineArgs, deployment.vllmDefaults);
  const lines = [
    `// From prefix-router plan: ${chosen.label} meets every SLO with ${instanceCount} × ${instanceType} (profile ${input.profile}).`,
    `// Cost while deployed: ${instanceCount} × ${instanceType} ≈ $${formatNumber(hourly, 2)}/h (~${usd(hourly * HOURS_PER_MONTH)}/month at ${HOURS_PER_MONTH} h; ${price.source.replace(/: pass --price-per-instance-hour$/, '')}).`,
    "import { App, Stack } from 'aws-cdk-lib';",
    "import { InstanceType, ModelSource, PrefixAwareLlmEndpoint, RoutingStrategy } from 'cdk-prefix-aware-llm';",
    '',
    'const app = new App();',
    "const stack = new Stack(app, 'PlannedLlmStack');",
    "new PrefixAwareLlmEndpoint(stack, 'Llm', {",
    `  model: ModelSource.huggingFace('${deployment.modelId.replace(/'/g, "\\'")}'),`,
    `  instanceType: ${instanceTypeCode(instanceType, deployment.gpuCount !== undefined)},`,
    `  instanceCount: ${instanceCount},`,
    `  routing: ${routingCode(routing)},`,
    ...engineLines(deployment, scheduler).map((l) => l.slice(4)),
    ...(autoScaling
      ? [`  autoScaling: { minCapacity: ${autoScaling.minCapacity}, maxCapacity: ${autoScaling.maxCapacity} },`]
      : noAutoscalingLines(a).map((l) => l.slice(4))),
    '});',
  ];
  return {
    strategy: chosen.label,
    props: {
      instanceCount,
      routing,
      ...(autoScaling ? { autoScaling } : {}),
      ...(Object.keys(scheduler).length > 0 ? { engine: scheduler } : {}),
    },
    snippet: lines.join('\n'),
  };
}

/** A strategy's label in the tables, marked when serve cannot run it (the notes say why). */
function strategyLabel(s: StrategyPlanReport): string {
  return s.simulatorOnly === null ? s.label : `${s.label} (simulator only)`;
}

const usd = (v: number): string => `$${Math.round(v).toLocaleString('en-US')}`;

function savingText(s: Saving): string {
  const at = s.atLeast ? '≥ ' : '';
  if (s.instances === 0) return `as many instances as ${s.against}`;
  if (s.instances < 0) return `${-s.instances} instance(s) more than ${s.against} (${usd(-s.monthlyUsd)}/month more)`;
  return `saves ${at}${s.instances} instance(s), ${at}${usd(s.monthlyUsd)}/month vs ${s.against}`;
}

/** The bill first: what deploying the printed app costs, before any detail (empty when no strategy met the SLOs). */
function billLines(report: PlanReport): string[] {
  if (report.construct === null) return [];
  const count = report.construct.props.instanceCount;
  const hourly = count * report.price.usdPerInstanceHour;
  return [
    `**Bill: ${count} × ${report.instanceType} = $${formatNumber(hourly, 2)}/hour, ~${usd(hourly * report.hoursPerMonth)}/month** (${report.construct.strategy}, the app file below).`,
    '',
  ];
}

/** The report as markdown: the answer first, then each strategy's figures at its size, then the measured curve. */
export function renderPlanMarkdown(report: PlanReport): string {
  const out: string[] = [];
  out.push(`# Plan: ${report.slos.join(', ')} on ${report.workload.spec}`, '');
  out.push(...billLines(report));
  out.push(
    `${report.workload.description}. Profile \`${report.profile}\` (one ${report.instanceType} per instance), ${report.instances.min}–${report.instances.max} instances searched, ${report.runs} simulations in ${report.wallSeconds} s.`,
    '',
  );
  out.push(
    `Price: $${report.price.usdPerInstanceHour}/instance-hour (${report.price.source}); a month is ${report.hoursPerMonth} h.`,
    '',
  );
  out.push(
    '| strategy | fewest instances | monthly cost | saving | TTFT P50 / P90 / P99 | E2E P90 | hit rate (of fleet ceiling) | req/s | busiest instance share |',
  );
  out.push('|---|---:|---:|---|---|---:|---|---:|---:|');
  for (const s of report.strategies) {
    const f = s.atMin ?? s.bestAtLargest;
    const size = s.minInstances === null ? `unreachable (${s.unreachableReason})` : String(s.minInstances);
    const figures =
      f === null
        ? ['–', '–', '–', '–', '–']
        : [
            `${formatMs(f.ttftMs.p50)} / ${formatMs(f.ttftMs.p90)} / ${formatMs(f.ttftMs.p99)}${s.minInstances === null ? ` (at ${f.instances})` : ''}`,
            formatMs(f.e2eMs.p90),
            `${formatPercent(f.hitRate)} (${formatPercent(f.hitRateOfFleetCeiling)})`,
            formatNumber(f.requestsPerSecond, 2),
            formatPercent(f.maxInstanceShare),
          ];
    out.push(
      `| ${strategyLabel(s)}${f !== null && f.policy !== s.label && s.atMin !== null ? ` → \`${f.policy}\`` : ''} | ${size} | ${s.monthlyUsd === null ? '–' : usd(s.monthlyUsd)} | ${s.savings.map(savingText).join('; ') || '–'} | ${figures.join(' | ')} |`,
    );
  }
  out.push('');
  out.push(...engineSettingsLines(report));
  if (report.construct !== null) {
    out.push(`## CDK app (${report.construct.strategy})`, '', '```ts', report.construct.snippet, '```', '');
  } else {
    out.push(
      '## CDK app',
      '',
      'No SageMaker routing strategy meets every SLO in the range searched: raise `--instances` or relax an SLO.',
      '',
    );
  }
  if (report.autoscaling !== null) {
    const a = report.autoscaling;
    out.push(`## Autoscaling bounds (${a.strategy}, ${a.windowSeconds}-s windows)`, '');
    for (const w of a.windows) {
      out.push(
        `- ${w.which} window ${w.fromMs / 1000}–${w.untilMs / 1000} s: ${w.requests} requests, ${formatNumber(w.promptChars / 1e6, 1)} M prompt characters → ${w.minInstances === null ? 'no size in range meets the SLOs' : `${w.minInstances} instances`}`,
      );
    }
    out.push(
      '',
      a.minCapacity === null
        ? a.note
        : `Suggested: minCapacity ${a.minCapacity}, maxCapacity ${a.maxCapacity}. ${a.note}`,
      '',
    );
  }
  out.push('## Measured sizes', '');
  for (const s of report.strategies) {
    out.push(
      `- ${s.label}: ${s.curve
        .map(
          (f) =>
            `${f.instances} → ${Object.entries(f.slo)
              .map(([k, v]) => `${k} ${v === null ? 'n/a' : k === 'error-rate' ? formatPercent(v, 2) : formatMs(v)}`)
              .join(', ')}${f.sloMargin <= 1 ? ' ✓' : ' ✗'}`,
        )
        .join('; ')}`,
    );
  }
  if (report.notes.length > 0) out.push('', '## Notes', '', ...report.notes.map((n) => `- ${n}`));
  out.push('');
  return out.join('\n');
}

/** The SLO figures of a run as `p90-ttft 1.71 s, error-rate 0.25 %`. */
function sloText(slo: Readonly<Record<string, number | null>>): string {
  return Object.entries(slo)
    .map(([k, v]) => `${k} ${v === null ? 'n/a' : k === 'error-rate' ? formatPercent(v, 2) : formatMs(v)}`)
    .join(', ');
}

/**
 * The Engine settings section, one text for the markdown and the HTML report: the grid searched, then per strategy
 * the settings its answer runs and what each argument off the profile's value bought there. Code spans are in
 * backticks (markdown's own; the HTML page turns them into `<code>`). Null when the plan searched no grid.
 */
export function engineSettingsSection(report: PlanReport): { readonly intro: string; readonly items: string[] } | null {
  if (report.engineGrid.length <= 1) return null;
  const intro = `Searched ${ENGINE_GRID_FLAGS.join(' and ')} (${report.engineGrid.length} settings: ${report.engineGrid.map((g) => `\`${g}\``).join(', ')}; the profile's first) below each answer.`;
  const items = report.strategies.map((s) => {
    if (s.engineArgs === null) return `${s.label}: no size in range meets the SLOs with any of them.`;
    const args = Object.entries(s.engineArgs).map(([k, v]) => `\`${k}=${v}\``);
    const sizes =
      s.baseEngineMinInstances === s.minInstances
        ? `${s.minInstances} instances, as with the profile's settings`
        : `${s.minInstances} instances instead of ${s.baseEngineMinInstances ?? `none up to ${report.instances.max}`} with the profile's settings`;
    const bought = s.engineEffects.map(
      (e) =>
        `${e.flag} ${e.value} instead of ${e.profileValue}: ${e.sloWithout === null ? 'not measured without it' : `${sloText(e.sloWithout)} → ${sloText(e.slo)}`}`,
    );
    return `${s.label}: ${args.join(', ')} at ${sizes}${bought.length === 0 ? " (the profile's settings did best)" : `; ${bought.join('; ')}`}.`;
  });
  return { intro, items };
}

function engineSettingsLines(report: PlanReport): string[] {
  const section = engineSettingsSection(report);
  if (section === null) return [];
  return ['## Engine settings', '', section.intro, '', ...section.items.map((item) => `- ${item}`), ''];
}

/** Escaped text with its backtick spans as `<code>` (escaping first: a backtick is not markup in either). */
function htmlWithCode(text: string): string {
  return escapeXml(text).replace(/`([^`]*)`/g, '<code>$1</code>');
}

function engineSettingsHtml(report: PlanReport): string[] {
  const section = engineSettingsSection(report);
  if (section === null) return [];
  return [
    `<h2>Engine settings</h2><p>${htmlWithCode(section.intro)}</p><ul class="notes">${section.items.map((item) => `<li>${htmlWithCode(item)}</li>`).join('')}</ul>`,
  ];
}

/** A self-contained HTML page: the markdown's content plus one chart per SLO of the figure against instance count. */
export function renderPlanHtml(report: PlanReport, slos: readonly Slo[]): string {
  const colors = strategyColors(report.strategies.map((s) => (s.curve[0]?.policy ?? s.label).split('?')[0]));
  const charts = slos.map((slo) =>
    sizeCurveChart(
      report.strategies.map((s, i) => ({
        label: s.label,
        color: colors[i],
        points: s.curve.map((f) => ({ instances: f.instances, value: f.slo[sloFigure(slo)] ?? null })),
      })),
      {
        title: `${sloFigure(slo)} against instance count (best setting at each measured size)`,
        yLabel: sloFigure(slo),
        bound: slo.kind === 'error-rate' ? slo.maxFraction : slo.maxMs,
        boundLabel: `SLO ${slo.text}`,
        formatValue: (v) => formatSloValue(slo, v),
      },
    ),
  );
  const rows = report.strategies
    .map((s) => {
      const f = s.atMin ?? s.bestAtLargest;
      return `<tr><td>${escapeXml(strategyLabel(s))}</td><td>${s.minInstances ?? `unreachable: ${escapeXml(s.unreachableReason ?? '')}`}</td><td>${s.monthlyUsd === null ? '–' : usd(s.monthlyUsd)}</td><td>${escapeXml(s.savings.map(savingText).join('; ') || '–')}</td><td>${f === null ? '–' : `${formatMs(f.ttftMs.p50)} / ${formatMs(f.ttftMs.p90)} / ${formatMs(f.ttftMs.p99)}`}</td><td>${f === null ? '–' : formatPercent(f.hitRate)}</td></tr>`;
    })
    .join('');
  const body = [
    `<h1>${escapeXml(`Plan: ${report.slos.join(', ')}`)}</h1>`,
    `<p>${escapeXml(`${report.workload.spec} — ${report.workload.description}. ${report.runs} simulations; $${report.price.usdPerInstanceHour}/instance-hour (${report.price.source}).`)}</p>`,
    `<div class="table-wrap"><table class="plan"><thead><tr><th>strategy</th><th>fewest instances</th><th>monthly cost</th><th>saving</th><th>TTFT P50 / P90 / P99</th><th>hit rate</th></tr></thead><tbody>${rows}</tbody></table></div>`,
    ...engineSettingsHtml(report),
    ...(report.construct ? [`<h2>CDK app</h2><pre>${escapeXml(report.construct.snippet)}</pre>`] : []),
    ...(report.autoscaling
      ? [
          `<h2>Autoscaling</h2><p>${escapeXml(report.autoscaling.minCapacity === null ? report.autoscaling.note : `minCapacity ${report.autoscaling.minCapacity}, maxCapacity ${report.autoscaling.maxCapacity}. ${report.autoscaling.note}`)}</p>`,
        ]
      : []),
    '<h2>SLO figures against instance count</h2>',
    ...charts.map((c) => `<figure>${c}</figure>`),
    ...(report.notes.length > 0
      ? [`<h2>Notes</h2><ul class="notes">${report.notes.map((n) => `<li>${escapeXml(n)}</li>`).join('')}</ul>`]
      : []),
  ];
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<title>${escapeXml(`Plan: ${report.slos.join(', ')}`)}</title>`,
    `<style>${REPORT_STYLE}\n/* The plan's saving and reason cells are sentences: let them wrap. */\ntable.plan td { white-space: normal; }</style>`,
    '</head>',
    '<body><main>',
    body.join('\n'),
    '</main></body>',
    '</html>',
    '',
  ].join('\n');
}

export interface PlanReportFiles {
  readonly json: string;
  readonly markdown: string;
  readonly html: string;
}

export async function writePlanReport(
  report: PlanReport,
  slos: readonly Slo[],
  directory: string,
): Promise<PlanReportFiles> {
  const dir = resolve(directory);
  await mkdir(dir, { recursive: true });
  const files = { json: join(dir, 'report.json'), markdown: join(dir, 'report.md'), html: join(dir, 'report.html') };
  await Promise.all([
    writeFile(files.json, `${JSON.stringify(report, null, 2)}\n`),
    writeFile(files.markdown, renderPlanMarkdown(report)),
    writeFile(files.html, renderPlanHtml(report, slos)),
  ]);
  return files;
}
