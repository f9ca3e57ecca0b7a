import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { liveEnvironment } from '../benchmark/live-report';
import { toStrategyRun } from '../benchmark/live-benchmark';
import { formatMs, formatPercent } from '../report/format';
import { markdownTable } from '../report/render-markdown';
import { buildReport, type BenchmarkReport, type StrategySummary } from '../report/report-model';
import { writeReport, type ReportFiles } from '../report/write-report';
import type { Workload } from '../workload/workload';
import type { AbPlan } from './ab-plan';
import type { CloudWatchView } from './cloudwatch-view';
import { routingLabel } from './endpoint-facts';
import type { AbOutcome } from './routing-ab';

/**
 * The A/B report: the benchmark report of every run (client-side figures: JSON, markdown, HTML, as `bench`
 * writes them) and `ab-report.md` / `ab-report.json`, which put the client's figures and CloudWatch's side by
 * side and say which is which.
 */
export interface AbReportFiles {
  readonly benchmark: ReportFiles | undefined;
  readonly markdown: string;
  readonly json: string;
}

const MODE_TITLE: Readonly<Record<AbPlan['mode'], string>> = {
  switch: 'strategies one after another',
  variants: 'variants side by side',
  shadow: 'shadow endpoints side by side',
};

const MODE_LINE: Readonly<Record<AbPlan['mode'], string>> = {
  switch: 'strategies one after another on the same fleet',
  variants: 'variants side by side (one workload split by TargetVariant)',
  shadow:
    'one shadow endpoint per strategy (copies of the configuration and of every inference component), all serving the same workload at the same time; the live endpoint was only read',
};

export function buildAbBenchmarkReport(
  plan: AbPlan,
  outcome: AbOutcome,
  workload: Workload,
  createdAt: string,
): BenchmarkReport | undefined {
  // A run stopped during its warm-up (Ctrl-C, a failure) measured nothing; the markdown notes it.
  const runs = outcome.runs.filter(measured);
  if (runs.length === 0) return undefined;
  const baseline =
    runs.find((r) => r.routing?.RoutingStrategy === 'RANDOM' || r.routing === undefined)?.label ?? runs[0].label;
  return buildReport({
    title: `Routing A/B on ${plan.facts.endpointName} (${MODE_TITLE[plan.mode]})`,
    mode: 'live',
    createdAt,
    workload,
    environment: {
      ...liveEnvironment(runs[0].result),
      endpoint: plan.facts.endpointName,
      'instance type': plan.facts.variants[0]?.instanceType ?? 'unknown',
      instances: plan.instances,
    },
    baseline,
    runs: runs.map((r) =>
      toStrategyRun(r.result, { name: r.routing?.RoutingStrategy?.toLowerCase() ?? 'random' }, [], r.label),
    ),
    notes: runs.flatMap((r) => r.result.notes.map((n) => `${r.label}: ${n}`)),
  });
}

function measured(r: AbOutcome['runs'][number]): boolean {
  return r.result.records.length > 0 && r.result.window.endMs > r.result.window.startMs;
}

const num = (x: number | null | undefined, digits = 0): string =>
  x === null || x === undefined ? '—' : x.toLocaleString('en-US', { maximumFractionDigits: digits });

/**
 * GPUUtilization / GPUMemoryUtilization of an instance are summed over its GPUs (0–100 × GPUs); divided by the GPU
 * count they read as a percentage of the instance's GPUs. Unknown count: the raw figure, labelled as such.
 */
function gpuCell(value: number | null | undefined, gpus: number | undefined): string {
  if (value == null) return '—';
  if (gpus === undefined) return `${value.toFixed(1)} (0–100 × GPUs)`;
  return `${(value / gpus).toFixed(1)} %`;
}

function cwRow(label: string, variant: string, view: CloudWatchView | undefined, gpus: number | undefined): string[] {
  const v = view?.variant;
  return [
    label,
    variant,
    num(v?.invocations),
    formatMs(v?.modelLatencyMs.p50 ?? null),
    formatMs(v?.modelLatencyMs.p90 ?? null),
    formatMs(v?.overheadLatencyMs.p90 ?? null),
    num(v?.concurrentRequestsPerModelMax),
    num(v?.invocation4xx),
    num(v?.invocation5xx),
    gpuCell(v?.gpuUtilizationAverage, gpus),
    gpuCell(v?.gpuMemoryUtilizationAverage, gpus),
  ];
}

function clientRow(s: StrategySummary): string[] {
  return [
    s.label,
    String(s.requests),
    String(s.errors),
    formatMs(s.ttftMs.p50),
    formatMs(s.ttftMs.p90),
    formatMs(s.e2eMs.p50),
    formatPercent(s.cacheHitRate.engineReported),
    s.throughput.requestsPerSecond === null ? '—' : s.throughput.requestsPerSecond.toFixed(2),
    s.throughput.outputTokensPerSecond === null ? '—' : Math.round(s.throughput.outputTokensPerSecond).toString(),
    s.balance.requestsMaxOverMean === null ? '—' : `${s.balance.requestsMaxOverMean.toFixed(2)}×`,
  ];
}

/** Where the run left the endpoint: restored (switch) or cleaned up (shadow), or what is left and how to finish. */
function aftermathLines(plan: AbPlan, outcome: AbOutcome): string[] {
  const out: string[] = [];
  if (plan.mode === 'shadow' && outcome.shadow !== undefined) {
    const { created, left } = outcome.shadow;
    const all = (r: typeof created): string[] => [...r.components, ...r.endpoints, ...r.configs];
    if (outcome.finished)
      out.push(
        `Cleaned up: every shadow resource the run created is deleted (${all(created).join(', ') || 'none'}).`,
        '',
      );
    else {
      out.push(
        `**NOT cleaned up**: left ${all(left).join(', ')}${outcome.shadow.leftHourlyUsd !== undefined ? `, still billing ≈ $${outcome.shadow.leftHourlyUsd.toFixed(2)}/h` : ''}. Delete them by hand:`,
        '',
        '```bash',
        ...outcome.finishCommands,
        '```',
        '',
      );
    }
  }
  if (plan.mode === 'switch') {
    if (outcome.finished) {
      out.push(
        `Restored: the endpoint is back on its original configuration \`${plan.facts.configName}\` (InService, no deployment pending); configurations created and deleted: ${outcome.deletedConfigs.join(', ') || 'none'}.`,
        '',
      );
    } else {
      const s = outcome.finalState;
      out.push(
        outcome.restored
          ? `**Restored, but not finished**: the endpoint is InService on \`${plan.facts.configName}\`; configurations left: ${outcome.leftConfigs.join(', ')}.`
          : `**NOT restored**: ${outcome.restoreError?.message}. Last seen: ${s === undefined ? 'unknown' : `${s.status} on \`${s.configName}\`${s.pendingConfig ? `, deploying \`${s.pendingConfig}\`` : ''}`}.`,
        '',
        'Finish by hand (docs/validate.md):',
        '',
        '```bash',
        ...outcome.finishCommands,
        '```',
        '',
      );
    }
  }
  return out;
}

/** The instance counts each run started with, flagged when they differ between runs. */
function fleetSizeLines(outcome: AbOutcome): string[] {
  const out: string[] = [];
  const counted = outcome.runs.filter((r) => r.instanceCounts !== undefined);
  if (counted.length > 0) {
    const text = counted
      .map(
        (r) =>
          `${r.label}: ${Object.entries(r.instanceCounts!)
            .map(([v, n]) => `${v} ${n}`)
            .join(', ')}`,
      )
      .join('; ');
    const distinct = new Set(counted.map((r) => JSON.stringify(r.instanceCounts)));
    out.push(
      `Instances when each run started (DescribeEndpoint): ${text}.${distinct.size > 1 ? ' **The fleets differ between runs** (autoscaling?): compare per-instance figures, not totals.' : ''}`,
      '',
    );
  }
  return out;
}

export function renderAbMarkdown(
  plan: AbPlan,
  outcome: AbOutcome,
  report: BenchmarkReport | undefined,
  runId: string,
): string {
  const out: string[] = [];
  out.push(`# Routing A/B on ${plan.facts.endpointName}`, '');
  out.push(`Run ${runId}, ${MODE_LINE[plan.mode]}.`);
  out.push(
    `Fleet: ${plan.facts.variants.map((v) => `${v.name} = ${v.instanceCount} × ${v.instanceType ?? 'unknown'} (${routingLabel(v.routing)})`).join('; ')}.`,
    '',
  );
  if (outcome.failure) out.push(`**Stopped early:** ${outcome.failure.message}`, '');
  out.push(...aftermathLines(plan, outcome));
  out.push('## Client-side (measured by prefix-router on the machine that sent the requests)', '');
  out.push(
    "TTFT is taken at the first payload part carrying generated text, E2E at the end of the stream; the hit rate is Σ usage.cached_tokens / Σ prompt_tokens from the engine's answers; per-instance balance needs to know the instance, which SageMaker reveals only through Custom Attributes (prefix-router-instance=<id>).",
    '',
  );
  for (const r of outcome.runs.filter((x) => !measured(x))) {
    out.push(
      `- ${r.label}: nothing was measured (${r.result.sent} requests sent; the run ended before its warm-up did, or sent nothing).`,
    );
  }
  if (report !== undefined) {
    out.push(
      markdownTable({
        header: [
          'run',
          'requests',
          'errors',
          'TTFT P50',
          'TTFT P90',
          'E2E P50',
          'hit rate (usage)',
          'req/s',
          'output tok/s',
          'requests max/mean',
        ],
        numeric: [false, true, true, true, true, true, true, true, true, true],
        rows: report.strategies.map(clientRow),
      }),
      '',
    );
  } else out.push('No run sent a request.', '');
  out.push(...fleetSizeLines(outcome));
  out.push(
    ...cloudWatchSection(
      outcome.runs.map((r) => ({
        label: r.label,
        sent: r.result.sent,
        gpusPerInstance: r.gpusPerInstance,
        cloudwatch: r.cloudwatch,
        cloudwatchError: r.cloudwatchError,
      })),
    ),
  );
  const notes = [
    ...outcome.notes,
    ...new Set(outcome.runs.flatMap((r) => Object.values(r.cloudwatch ?? {}).flatMap((v) => v.notes))),
  ];
  if (notes.length > 0) {
    out.push('## Notes', '');
    for (const n of notes) out.push(`- ${n}`);
    out.push('');
  }
  return out.join('\n');
}

export async function writeAbReport(
  directory: string,
  plan: AbPlan,
  outcome: AbOutcome,
  workload: Workload,
  runId: string,
  createdAt: string,
): Promise<AbReportFiles> {
  const report = buildAbBenchmarkReport(plan, outcome, workload, createdAt);
  const benchmark = report === undefined ? undefined : await writeReport(report, directory, { baseName: 'report' });
  const markdown = join(directory, 'ab-report.md');
  const json = join(directory, 'ab-report.json');
  if (benchmark === undefined) {
    const { mkdir } = await import('node:fs/promises');
    await mkdir(directory, { recursive: true });
  }
  await writeFile(markdown, renderAbMarkdown(plan, outcome, report, runId));
  const jsonBody = {
    schema: 'cdk-prefix-aware-llm/routing-ab',
    runId,
    createdAt,
    endpointName: plan.facts.endpointName,
    mode: plan.mode,
    originalConfig: plan.facts.configName,
    restored: outcome.restored,
    finished: outcome.finished,
    restoreError: outcome.restoreError?.message ?? null,
    finalState: outcome.finalState ?? null,
    leftConfigs: outcome.leftConfigs,
    finishCommands: outcome.finishCommands,
    failure: outcome.failure?.message ?? null,
    interrupted: outcome.interrupted,
    createdConfigs: outcome.createdConfigs,
    deletedConfigs: outcome.deletedConfigs,
    shadow: outcome.shadow ?? null,
    switch:
      plan.mode === 'switch'
        ? {
            style: plan.switchPlan.style,
            deploymentConfig: plan.switchPlan.deploymentConfig ?? null,
            why: plan.switchPlan.why,
          }
        : null,
    runs: outcome.runs.map((r) => ({
      label: r.label,
      variant: r.variant ?? null,
      routing: r.routing ?? null,
      configName: r.configName ?? null,
      instanceCounts: r.instanceCounts ?? null,
      wallWindow: {
        start: new Date(r.wallWindow.startMs).toISOString(),
        end: new Date(r.wallWindow.endMs).toISOString(),
      },
      client: report?.strategies.find((s) => s.label === r.label) ?? null,
      cloudwatch: r.cloudwatch ?? null,
      cloudwatchError: r.cloudwatchError ?? null,
    })),
    notes: outcome.notes,
  };
  await writeFile(json, `${JSON.stringify(jsonBody, null, 2)}\n`);
  return { benchmark, markdown, json };
}

/** A run as the CloudWatch section needs it. */
export interface CloudWatchRun {
  readonly label: string;
  readonly sent: number;
  /** GPUs per instance (GPUUtilization is 0–100 × GPUs); undefined when the type is unknown. */
  readonly gpusPerInstance?: number;
  readonly cloudwatch?: Readonly<Record<string, CloudWatchView>>;
  readonly cloudwatchError?: string;
}

/** CloudWatch's figures of each run (per variant, per instance, sidecar), labelled as CloudWatch's, as markdown lines. */
export function cloudWatchSection(runs: readonly CloudWatchRun[]): string[] {
  const out: string[] = [];
  out.push("## CloudWatch's view (AWS/SageMaker and /aws/sagemaker/Endpoints)", '');
  const anyView = runs.flatMap((r) => Object.values(r.cloudwatch ?? {}))[0];
  out.push(
    anyView
      ? `Read with GetMetricData, one ${anyView.periodSeconds}-s period per run covering its window (start and end rounded out to the minute, so up to a minute of neighbouring traffic can be included); the endpoint publishes every ${anyView.publishSeconds} s. ModelLatency is the container's time for the whole response (not TTFT); OverheadLatency is SageMaker's routing and transport time.`
      : 'CloudWatch was not read (no run finished, or it was switched off).',
    '',
  );
  out.push(...variantTableLines(runs), ...instanceTableLines(runs), ...sidecarTableLines(runs));
  return out;
}

/** Each run's variant figures, and how the client's count compares with CloudWatch's. */
function variantTableLines(runs: readonly CloudWatchRun[]): string[] {
  const out: string[] = [];
  const cwRows: string[][] = [];
  for (const r of runs) {
    if (r.cloudwatchError) cwRows.push([r.label, '—', `error: ${r.cloudwatchError}`, '', '', '', '', '', '', '', '']);
    for (const [variant, view] of Object.entries(r.cloudwatch ?? {}))
      cwRows.push(cwRow(r.label, variant, view, r.gpusPerInstance));
  }
  if (cwRows.length > 0) {
    out.push(
      markdownTable({
        header: [
          'run',
          'variant',
          'Invocations',
          'ModelLatency P50',
          'ModelLatency P90',
          'OverheadLatency P90',
          'ConcurrentRequestsPerModel max',
          '4XX',
          '5XX',
          'GPU util avg (per GPU)',
          'GPU mem avg (per GPU)',
        ],
        numeric: [false, false, true, true, true, true, true, true, true, true, true],
        rows: cwRows,
      }),
      '',
    );
    for (const r of runs) {
      const client = r.sent;
      const cw = Object.values(r.cloudwatch ?? {}).reduce((n, v) => n + (v.variant.invocations ?? 0), 0);
      if (r.cloudwatch)
        out.push(
          `- ${r.label}: the client sent ${client} requests; CloudWatch counted ${cw} invocations in the window (both counts include the warm-up; the window is rounded out to whole minutes, so neighbouring traffic can add to CloudWatch's).`,
        );
    }
    out.push(
      '',
      "CloudWatch's window covers each whole run, warm-up included, so its latency figures include the warm-up that the client-side table leaves out. GPU figures are divided by the instance type's GPU count (CloudWatch reports 0–100 × GPUs per instance).",
      '',
    );
  }
  return out;
}

/** The enhanced metrics' per-instance series of each run. */
function instanceTableLines(runs: readonly CloudWatchRun[]): string[] {
  const out: string[] = [];
  const instanceRows: string[][] = [];
  for (const r of runs) {
    for (const [variant, view] of Object.entries(r.cloudwatch ?? {})) {
      for (const s of view.perInstance) {
        instanceRows.push([
          r.label,
          variant,
          Object.entries(s.dimensions)
            .map(([k, v]) => `${k}=${v}`)
            .join(' '),
          `${s.metric} ${s.stat}`,
          num(s.value, 1),
        ]);
      }
    }
  }
  if (instanceRows.length > 0) {
    out.push('### Per instance (CloudWatch enhanced metrics)', '');
    out.push(
      markdownTable({
        header: ['run', 'variant', 'instance', 'metric', 'value'],
        numeric: [false, false, false, false, true],
        rows: instanceRows,
      }),
      '',
    );
  }
  return out;
}

/** The router sidecar's EMF figures, one row per window where they are endpoint-wide. */
function sidecarTableLines(runs: readonly CloudWatchRun[]): string[] {
  const out: string[] = [];
  const sidecarRows: string[][] = [];
  let endpointWide = false;
  // Series without a VariantName are the whole endpoint's: one row per window (variants mode shares one window
  // between its runs), naming every run it covers, not one copy per variant.
  const endpointRowOfWindow = new Map<string, string[]>();
  for (const r of runs) {
    for (const [variant, view] of Object.entries(r.cloudwatch ?? {})) {
      const s = view.sidecar;
      if (s === null) continue;
      if (s.scope === 'endpoint') {
        endpointWide = true;
        const key = `${view.startTime}/${view.endTime}`;
        const row = endpointRowOfWindow.get(key);
        if (row !== undefined) {
          if (!row[0].split(' + ').includes(r.label)) row[0] = `${row[0]} + ${r.label}`;
          continue;
        }
      }
      const row = [
        r.label,
        s.scope === 'endpoint' ? 'all variants (endpoint-wide)' : variant,
        formatPercent(s.hitRate),
        formatMs(s.ttftMs.p50),
        formatMs(s.ttftMs.p90),
        Object.entries(s.routingDecisions)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ') || '—',
      ];
      if (s.scope === 'endpoint') endpointRowOfWindow.set(`${view.startTime}/${view.endTime}`, row);
      sidecarRows.push(row);
    }
  }
  if (sidecarRows.length > 0) {
    out.push('### Router sidecar (EMF metrics, namespace PrefixRouter)', '');
    if (endpointWide) {
      out.push(
        "The sidecar's metrics carry no VariantName dimension, so these figures are the whole endpoint's (every variant together), not any one variant's.",
        '',
      );
    }
    out.push(
      markdownTable({
        header: ['run', 'variant', 'hit rate (ReportedCached/Prompt)', 'TTFT P50', 'TTFT P90', 'decisions by reason'],
        numeric: [false, false, true, true, true, false],
        rows: sidecarRows,
      }),
      '',
    );
  }
  return out;
}
