import { errorCountsText } from './format';
import type { BenchmarkReport } from './report-model';
import { reportHeadline } from './report-verdict';
import { ceilingRows, comparisonTable, decisionTable, instanceTable, summaryTable, type Table } from './report-table';

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function markdownTable(table: Table): string {
  const lines = [
    `| ${table.header.map(cell).join(' | ')} |`,
    `| ${table.numeric.map((n) => (n ? '---:' : '---')).join(' | ')} |`,
  ];
  for (const row of table.rows) lines.push(`| ${row.map(cell).join(' | ')} |`);
  return lines.join('\n');
}

/** The report as markdown: what ran, the summary table, deltas against the baseline, ceilings, per-instance load. */
export function renderMarkdown(report: BenchmarkReport): string {
  const out: string[] = [];
  out.push(`# ${report.title}`, '');
  out.push(
    `${report.mode === 'simulated' ? 'Simulated' : 'Live'} run, ${report.createdAt}. Workload \`${report.workload.spec}\`: ${report.workload.description}; ${report.workload.load}.`,
    '',
  );
  const environment = Object.entries(report.environment);
  if (environment.length > 0) out.push(environment.map(([k, v]) => `${k}: ${v}`).join(' · '), '');

  const headline = reportHeadline(report);
  if (headline !== null) {
    out.push('## Verdict', '', `**${headline.verdict}**`, '');
    for (const w of headline.warnings) out.push(`- ⚠ ${w}`);
    if (headline.warnings.length > 0) out.push('');
  }

  out.push('## Results', '', markdownTable(summaryTable(report)), '');
  out.push(
    'TTFT and E2E: client-side, successful requests sent in the measured window. Hit rate: Σ cached prompt tokens ÷ Σ prompt tokens ' +
      '(engine usage); Prometheus: Δ vllm:prefix_cache_hits ÷ Δ vllm:prefix_cache_queries. "Of fleet ceiling" = hit rate ÷ fleet ceiling. ' +
      'Percentiles: linear interpolation between closest ranks.',
    '',
  );

  if (report.baseline !== null && report.comparisons.length > 0) {
    out.push(`## Against ${report.baseline}`, '', markdownTable(comparisonTable(report)), '');
    out.push(
      'Latency and throughput: change relative to the baseline (negative latency is better). Hit rate: difference in percentage points.',
      '',
    );
  }

  const ceilings = ceilingRows(report);
  if (ceilings.length > 0) {
    out.push('## Cache-hit ceilings (from the workload alone)', '');
    out.push(markdownTable({ header: ['ceiling', 'value'], rows: ceilings, numeric: [false, true] }), '');
  }

  const decisions = decisionTable(report);
  if (decisions !== undefined) {
    out.push('## Decisions', '', markdownTable(decisions), '');
    out.push(
      'Reasons: what the policy reported for each request sent in the window. Predicted hit: Σ tokens the policy predicted cached ÷ Σ prompt tokens; delivered: what the engine reported for the same requests.',
      '',
    );
  }

  out.push(
    '## Per-instance load',
    '',
    'Request share · time-weighted mean in-flight / max in-flight.',
    '',
    markdownTable(instanceTable(report)),
    '',
  );

  const errors = report.strategies.filter((s) => s.errors > 0);
  if (errors.length > 0) {
    out.push('## Errors', '');
    for (const s of errors) out.push(`- ${s.label}: ${errorCountsText(s)}`);
    out.push('');
  }

  const parameters = Object.entries(report.workload.parameters);
  if (parameters.length > 0) {
    out.push(
      '## Workload parameters',
      '',
      markdownTable({
        header: ['parameter', 'value'],
        rows: parameters.map(([k, v]) => [k, String(v)]),
        numeric: [false, false],
      }),
      '',
    );
  }
  const notes = [...report.workload.notes, ...report.notes];
  if (notes.length > 0) {
    out.push('## Notes', '');
    for (const n of notes) out.push(`- ${n}`);
    out.push('');
  }
  return out.join('\n');
}
