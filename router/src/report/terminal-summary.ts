import { errorCountsText, formatDeltaPct, formatMs, formatNumber, formatPercent } from './format';
import type { BenchmarkReport } from './report-model';
import { reportHeadline } from './report-verdict';

/** Widest line the terminal summary writes. */
export const TERMINAL_COLUMNS = 120;

/** Words of `text` on lines of at most `width` characters (a longer word gets a line of its own). */
export function wrap(text: string, width: number, indent = ''): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const candidate = line === '' ? indent + word : `${line} ${word}`;
    if (candidate.length > width && line !== '') {
      lines.push(line);
      line = indent + word;
    } else {
      line = candidate;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

function ellipsize(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(1, width - 1))}…`;
}

/**
 * What a terminal gets after a run: the verdict, the noise warnings, one compact row per strategy (the columns
 * that decide), and where the full report is. Every line fits TERMINAL_COLUMNS; the full tables stay in
 * report.md and the HTML page.
 */
export function terminalSummary(report: BenchmarkReport, reportPaths: readonly string[] = []): string {
  const out: string[] = [];
  const headline = reportHeadline(report);
  if (headline !== null) {
    out.push(...wrap(headline.verdict, TERMINAL_COLUMNS));
    for (const w of headline.warnings)
      out.push(...wrap(`⚠ ${w}`, TERMINAL_COLUMNS, '  ').map((l, i) => (i === 0 ? l : `  ${l.trimStart()}`)));
    out.push('');
  }
  if (report.baseline !== null && report.comparisons.length > 0)
    out.push(`Δ: change against ${report.baseline} (negative TTFT is faster).`);
  const header = ['strategy', 'TTFT P50', 'TTFT P90', 'hit rate', 'of ceil.', 'tok/s', 'Δ P50', 'Δ P90', 'Δ tok/s'];
  const rows = report.strategies.map((s) => {
    const c = report.comparisons.find((x) => x.label === s.label);
    return [
      s.label,
      formatMs(s.ttftMs.p50),
      formatMs(s.ttftMs.p90),
      formatPercent(s.cacheHitRate.engineReported ?? s.cacheHitRate.prometheus),
      formatPercent(s.cacheHitRate.ofFleetCeiling, 0),
      formatNumber(s.throughput.outputTokensPerSecond),
      c ? formatDeltaPct(c.ttftP50DeltaPct) : '—',
      c ? formatDeltaPct(c.ttftP90DeltaPct) : '—',
      c ? formatDeltaPct(c.outputTokensPerSecondDeltaPct) : '—',
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  // The strategy column gives way (labels are ellipsized) so every line fits.
  const others = widths.slice(1).reduce((a, w) => a + w + 2, 0);
  widths[0] = Math.max(12, Math.min(widths[0], TERMINAL_COLUMNS - others));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === 0 ? ellipsize(c, widths[0]).padEnd(widths[0]) : c.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  out.push(line(header), widths.map((w) => '─'.repeat(w)).join('  '), ...rows.map(line));
  const errors = report.strategies.filter((s) => s.errors > 0);
  for (const s of errors) {
    out.push(...wrap(`errors of ${s.label}: ${errorCountsText(s)}`, TERMINAL_COLUMNS));
  }
  if (reportPaths.length > 0) {
    out.push('');
    reportPaths.forEach((p, i) => out.push(`${i === 0 ? 'report:' : '       '} ${p}`));
  }
  return out.join('\n');
}
