import { errorCountsText } from './format';
import { priorityCdfSection } from './priority-charts';
import type { BenchmarkReport } from './report-model';
import { comparisonNoise, reportHeadline, type HeadlineDelta } from './report-verdict';
import {
  CACHE_LOAD_COLUMNS,
  ceilingRows,
  comparisonTable,
  decisionTable,
  instanceTable,
  LATENCY_COLUMNS,
  selectColumns,
  summaryTable,
  type Table,
} from './report-table';
import { cdfChart, escapeXml, instanceBars, strategyColors } from './svg-charts';

export interface HtmlOptions {
  /** TTFT CDF x axis: linear, logarithmic, or one chart of each (default). */
  readonly ttftScale?: 'linear' | 'log' | 'both';
}

export const REPORT_STYLE = `
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: #1d232a; margin: 0; background: #f6f7f9; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 32px 0 10px; border-bottom: 1px solid #dde1e6; padding-bottom: 4px; }
p.meta { color: #4b5563; margin: 0 0 4px; }
code { font: 12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #eef0f3; padding: 1px 4px; border-radius: 3px; word-break: break-all; }
.table-wrap { overflow-x: auto; background: #fff; border: 1px solid #dde1e6; border-radius: 6px; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { padding: 6px 10px; border-bottom: 1px solid #eceef1; white-space: nowrap; text-align: left; }
td:first-child { white-space: normal; min-width: 160px; max-width: 340px; }
h3 { font-size: 14px; margin: 16px 0 6px; color: #374151; }
th { background: #f0f2f5; font-weight: 600; font-size: 12px; white-space: normal; vertical-align: bottom; }
td.num, th.num { text-align: right; }
tr:last-child td { border-bottom: none; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; vertical-align: middle; }
.charts { display: flex; flex-wrap: wrap; gap: 16px; }
.card { background: #fff; border: 1px solid #dde1e6; border-radius: 6px; padding: 8px; flex: 0 1 auto; min-width: 0; }
.card svg { display: block; max-width: 100%; height: auto; }
.better { color: #0a7a3d; } .worse { color: #b42318; } .noise { color: #6b7280; }
.verdict { background: #fff; border: 1px solid #dde1e6; border-left: 4px solid #2563eb; border-radius: 6px; padding: 12px 16px; margin: 16px 0 0; }
.verdict p { margin: 0 0 8px; font-size: 16px; font-weight: 600; overflow-wrap: anywhere; }
.verdict .figures { display: flex; flex-wrap: wrap; gap: 8px 24px; margin: 0; padding: 0; list-style: none; }
.verdict .figures li { font-variant-numeric: tabular-nums; }
.verdict .figures b { font-size: 18px; }
.verdict ul.warnings { margin: 8px 0 0; padding-left: 20px; color: #92400e; }
ul.notes { margin: 0; padding-left: 20px; }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0; background: #fff; border: 1px solid #dde1e6; border-radius: 6px; padding: 10px 14px; }
dl.kv dt { color: #4b5563; } dl.kv dd { margin: 0; font-variant-numeric: tabular-nums; }
svg text { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; fill: #1d232a; }
svg .chart-title { font-size: 14px; font-weight: 600; }
svg .panel-title { font-size: 12px; fill: #4b5563; }
svg .tick { font-size: 11px; fill: #4b5563; }
svg .axis-label { font-size: 12px; fill: #4b5563; }
svg .grid { stroke: #e5e7eb; stroke-width: 1; }
svg .guide { stroke: #9ca3af; stroke-width: 1; stroke-dasharray: 4 3; }
svg .axis { stroke: #6b7280; stroke-width: 1; }
svg .reference { stroke: #111827; stroke-width: 1.2; stroke-dasharray: 5 4; }
svg .marker { stroke: #111827; stroke-width: 2; }
svg .legend-text { font-size: 12px; }
`;

/** Colour class of a delta cell: lower latency or higher hit rate / throughput is better; within noise is grey. */
function deltaClass(column: string, text: string, noise = false): string {
  if (!/^[+−]/.test(text)) return '';
  if (noise) return 'noise';
  const negative = text.startsWith('−');
  const lowerIsBetter = column.startsWith('TTFT') || column.startsWith('E2E');
  return negative === lowerIsBetter ? 'better' : 'worse';
}

function htmlTable(
  table: Table,
  options: { swatches?: readonly string[]; deltas?: boolean; noise?: readonly (readonly boolean[])[] } = {},
): string {
  const head = table.header.map((h, i) => `<th${table.numeric[i] ? ' class="num"' : ''}>${escapeXml(h)}</th>`).join('');
  const rows = table.rows
    .map((row, r) => {
      const cells = row.map((c, i) => {
        const classes = [
          table.numeric[i] ? 'num' : '',
          options.deltas && i > 0 ? deltaClass(table.header[i], c, options.noise?.[r]?.[i] ?? false) : '',
        ]
          .filter(Boolean)
          .join(' ');
        const swatch =
          i === 0 && options.swatches?.[r]
            ? `<span class="swatch" style="background:${options.swatches[r]}"></span>`
            : '';
        return `<td${classes ? ` class="${classes}"` : ''}>${swatch}${escapeXml(c)}</td>`;
      });
      return `<tr>${cells.join('')}</tr>`;
    })
    .join('\n');
  return `<div class="table-wrap"><table><thead><tr>${head}</tr></thead><tbody>\n${rows}\n</tbody></table></div>`;
}

function keyValues(pairs: readonly (readonly [string, string])[]): string {
  return `<dl class="kv">${pairs.map(([k, v]) => `<dt>${escapeXml(k)}</dt><dd>${escapeXml(v)}</dd>`).join('')}</dl>`;
}

/** A self-contained HTML page (inline CSS and SVG, no script, no external resource) for one report. */
export function renderHtml(report: BenchmarkReport, options: HtmlOptions = {}): string {
  const colors = strategyColors(report.strategies.map((s) => s.strategy.name));
  const body: string[] = [
    `<h1>${escapeXml(report.title)}</h1>`,
    `<p class="meta">${report.mode === 'simulated' ? 'Simulated' : 'Live'} run · ${escapeXml(report.createdAt)} · ${escapeXml(report.workload.description)} · ${escapeXml(report.workload.load)}</p>`,
    `<p class="meta">Workload <code>${escapeXml(report.workload.spec)}</code></p>`,
    ...verdictSection(report),
    ...resultSections(report, colors),
    ...ttftSection(report, colors, options),
    ...instanceSection(report, colors),
    ...detailSections(report),
  ];
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeXml(report.title)}</title>`,
    `<style>${REPORT_STYLE}</style>`,
    '</head>',
    '<body><main>',
    body.join('\n'),
    '</main></body>',
    '</html>',
    '',
  ].join('\n');
}

/** The headline: the verdict, its four figures coloured better / worse / noise, and its warnings. */
function verdictSection(report: BenchmarkReport): string[] {
  const headline = reportHeadline(report);
  if (headline === null) return [];
  const figure = (name: string, d: HeadlineDelta) =>
    `<li>${escapeXml(name)} <b class="${d.noise ? 'noise' : d.better ? 'better' : 'worse'}">${escapeXml(d.text)}</b></li>`;
  return [
    '<section class="verdict" id="verdict">',
    `<p>${escapeXml(headline.verdict)}</p>`,
    `<ul class="figures">${figure('TTFT P50', headline.ttftP50)}${figure('TTFT P90', headline.ttftP90)}${figure('hit rate', headline.hitRate)}${figure('throughput', headline.throughput)}</ul>`,
    headline.warnings.length > 0
      ? `<ul class="warnings">${headline.warnings.map((w) => `<li>⚠ ${escapeXml(w)}</li>`).join('')}</ul>`
      : '',
    '</section>',
  ];
}

/** The results tables (latency; cache, throughput and load) and the comparison against the baseline. */
function resultSections(report: BenchmarkReport, colors: readonly string[]): string[] {
  const summary = summaryTable(report);
  const sections = [
    '<h2>Results</h2>',
    '<h3>Latency</h3>',
    htmlTable(selectColumns(summary, LATENCY_COLUMNS), { swatches: colors }),
    '<h3>Cache, throughput, load and routing cost</h3>',
    htmlTable(selectColumns(summary, CACHE_LOAD_COLUMNS), { swatches: colors }),
    '<p class="meta">TTFT and E2E are client-side, over successful requests sent in the measured window. Hit rate = Σ cached prompt tokens ÷ Σ prompt tokens (engine usage); Prometheus = Δ vllm:prefix_cache_hits ÷ Δ vllm:prefix_cache_queries; “of fleet ceiling” = hit rate ÷ fleet ceiling. Percentiles interpolate linearly between closest ranks.</p>',
  ];
  if (report.baseline === null || report.comparisons.length === 0) return sections;
  const colorOf = new Map(report.strategies.map((s, i) => [s.label, colors[i]]));
  return [
    ...sections,
    `<h2>Against ${escapeXml(report.baseline)}</h2>`,
    htmlTable(comparisonTable(report), {
      swatches: report.comparisons.map((c) => colorOf.get(c.label) ?? '#999'),
      deltas: true,
      noise: report.comparisons.map((c) => {
        const n = comparisonNoise(report, c);
        // Columns of comparisonTable: strategy, TTFT P50, P90, P99, E2E P50, hit rate, output tok/s, req/s.
        return [
          false,
          n.ttftP50,
          n.ttftP90,
          n.ttftP99,
          n.e2eP50,
          n.hitRate,
          n.outputTokensPerSecond,
          n.requestsPerSecond,
        ];
      }),
    }),
    '<p class="meta">Latency and throughput: change relative to the baseline. Hit rate: difference in percentage points. Grey: within noise.</p>',
  ];
}

/** The TTFT CDF on a linear axis, a logarithmic one, or both. */
function ttftSection(report: BenchmarkReport, colors: readonly string[], options: HtmlOptions): string[] {
  const series = report.strategies.map((s, i) => ({ label: s.label, color: colors[i], points: s.ttftCdf }));
  const scales: ('linear' | 'log')[] =
    options.ttftScale === 'linear' ? ['linear'] : options.ttftScale === 'log' ? ['log'] : ['linear', 'log'];
  return [
    '<h2>Time to first token</h2>',
    '<div class="charts">',
    ...scales.map(
      (scale) =>
        `<div class="card">${cdfChart(series, { scale, title: `TTFT CDF${scale === 'log' ? ' (log x)' : ''}`, xLabel: 'time to first token', width: 540, height: 360 })}</div>`,
    ),
    '</div>',
    ...priorityCdfSection(report.strategies, colors),
  ];
}

/** Per-instance share and in-flight bars for each strategy, on one y-scale so they compare, and their table. */
function instanceSection(report: BenchmarkReport, colors: readonly string[]): string[] {
  const scale = {
    share: Math.max(0, ...report.strategies.flatMap((s) => s.instances.map((i) => i.share))),
    inFlight: Math.max(0, ...report.strategies.flatMap((s) => s.instances.map((i) => i.maxInFlight))),
  };
  return [
    '<h2>Per-instance load</h2>',
    '<div class="charts">',
    ...report.strategies.map(
      (s, i) =>
        `<div class="card">${instanceBars(s.instances, { title: s.label, color: colors[i], width: 540, scale })}</div>`,
    ),
    '</div>',
    '<p class="meta">Table: request share · time-weighted mean in-flight / max in-flight.</p>',
    htmlTable(instanceTable(report)),
  ];
}

/** Decisions, ceilings, errors, workload parameters, environment and notes, each where the report has them. */
function detailSections(report: BenchmarkReport): string[] {
  const body: string[] = [];
  const decisions = decisionTable(report);
  if (decisions !== undefined) {
    body.push(
      '<h2>Decisions</h2>',
      '<p class="meta">Share of requests per decision reason; predicted vs delivered prefix-cache hit where the policy predicts.</p>',
      htmlTable(decisions),
    );
  }
  const ceilings = ceilingRows(report);
  if (ceilings.length > 0) {
    body.push(
      '<h2>Cache-hit ceilings</h2>',
      '<p class="meta">From the workload alone, requests in arrival order. Ideal: one cache of unlimited size. Fleet: one LRU cache as large as all instances’ KV together. No router beats the fleet ceiling; a strategy’s hit rate as a fraction of it is its score.</p>',
      keyValues(ceilings),
    );
  }
  const errors = report.strategies.filter((s) => s.errors > 0);
  if (errors.length > 0) {
    body.push('<h2>Errors</h2>', '<ul class="notes">');
    for (const s of errors) body.push(`<li>${escapeXml(`${s.label}: ${errorCountsText(s)}`)}</li>`);
    body.push('</ul>');
  }
  body.push(
    '<h2>Workload parameters</h2>',
    keyValues(Object.entries(report.workload.parameters).map(([k, v]) => [k, String(v)] as const)),
  );
  const environment = Object.entries(report.environment);
  if (environment.length > 0)
    body.push('<h2>Environment</h2>', keyValues(environment.map(([k, v]) => [k, String(v)] as const)));
  const notes = [...report.workload.notes, ...report.notes];
  if (notes.length > 0)
    body.push('<h2>Notes</h2>', `<ul class="notes">${notes.map((n) => `<li>${escapeXml(n)}</li>`).join('')}</ul>`);
  return body;
}
