import type { InstanceSummary } from './report-model';
import type { CdfPoint } from './stats';

/**
 * Inline SVG charts for the HTML report, generated as strings: no script, no font, no network. Colours are
 * the Okabe–Ito palette (distinguishable with the common colour-vision deficiencies).
 */
export const SERIES_COLORS = [
  '#0072B2',
  '#D55E00',
  '#009E73',
  '#CC79A7',
  '#E69F00',
  '#56B4E9',
  '#000000',
  '#999999',
] as const;

export function seriesColor(index: number): string {
  return SERIES_COLORS[index % SERIES_COLORS.length];
}

/** The colour each policy keeps in every report (demo, simulate, plan), so a reader learns it once. */
const POLICY_COLORS: Readonly<Record<string, string>> = {
  random: '#999999',
  'least-outstanding-requests': '#E69F00',
  'sagemaker-prefix-aware': '#0072B2',
  'cache-aware': '#D55E00',
  'round-robin': '#56B4E9',
};

/**
 * Colours of strategies by policy name, in order: a policy's own colour for its first strategy, and the palette's
 * unused colours for others (a second setting of the same policy, a policy with no colour of its own).
 */
export function strategyColors(policyNames: readonly string[]): string[] {
  const used = new Set<string>();
  const owned = new Set(Object.values(POLICY_COLORS));
  // Unused colours no policy owns first, then unused ones another policy owns: distinct up to the palette's size.
  const spare = () =>
    SERIES_COLORS.find((c) => !used.has(c) && !owned.has(c)) ?? SERIES_COLORS.find((c) => !used.has(c));
  return policyNames.map((name, i) => {
    const own = POLICY_COLORS[name];
    const color = own !== undefined && !used.has(own) ? own : (spare() ?? seriesColor(i));
    used.add(color);
    return color;
  });
}

export function escapeXml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** Round coordinates so the markup stays small and stable. */
function r(x: number): string {
  return (Math.round(x * 10) / 10).toString();
}

/** About `target` evenly spaced "nice" ticks (1, 2, 5 × 10^k steps) covering [min, max]. */
export function linearTicks(min: number, max: number, target = 6): number[] {
  if (!(max > min)) return [min];
  const rough = (max - min) / target;
  const magnitude = Math.pow(10, Math.floor(Math.log10(rough)));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= rough) ?? 10 * magnitude;
  const ticks: number[] = [];
  for (let t = Math.ceil(min / step) * step; t <= max + step * 1e-9; t += step) ticks.push(Number(t.toPrecision(12)));
  return ticks;
}

/** 1, 2, 5 × 10^k ticks within [min, max] (min > 0); only powers of ten when that already gives enough ticks. */
export function logTicks(min: number, max: number): number[] {
  if (!(min > 0) || !(max >= min)) return [];
  const ticks: number[] = [];
  const first = Math.floor(Math.log10(min));
  const last = Math.ceil(Math.log10(max));
  const multipliers = last - first > 4 ? [1] : [1, 2, 5];
  for (let e = first; e <= last; e++) {
    for (const m of multipliers) {
      const t = Number((m * Math.pow(10, e)).toPrecision(12));
      if (t >= min * (1 - 1e-9) && t <= max * (1 + 1e-9)) ticks.push(t);
    }
  }
  return ticks;
}

/** Axis label of a time in milliseconds: "250 ms", "1.5 s". */
export function formatTickMs(ms: number): string {
  if (ms < 1) return `${Number(ms.toPrecision(2))} ms`;
  if (ms < 1000) return `${Number(ms.toPrecision(3))} ms`;
  return `${Number((ms / 1000).toPrecision(3))} s`;
}

/** Approximate width (px) of one character at a font size: system-ui averages ≈0.6 em for digits and lower case. */
export function textWidth(text: string, fontPx: number): number {
  return text.length * fontPx * 0.6;
}

/**
 * Which tick labels to draw so that no two overlap: labels are taken in priority order (powers of ten first on a
 * log axis, then the rest from left to right) and kept only when their box, plus a gap, is clear of every kept
 * one. Grid lines stay for every tick; only the text is thinned.
 */
export function visibleTickLabels(
  ticks: readonly number[],
  xOf: (t: number) => number,
  label: (t: number) => string,
  fontPx = 11,
  gapPx = 6,
): Set<number> {
  const isPowerOfTen = (t: number) => Math.abs(Math.log10(t) - Math.round(Math.log10(t))) < 1e-9;
  const order = [...ticks].sort((a, b) => Number(isPowerOfTen(b)) - Number(isPowerOfTen(a)) || a - b);
  const kept: { lo: number; hi: number }[] = [];
  const visible = new Set<number>();
  for (const t of order) {
    const half = textWidth(label(t), fontPx) / 2;
    const box = { lo: xOf(t) - half - gapPx / 2, hi: xOf(t) + half + gapPx / 2 };
    if (kept.some((k) => box.lo < k.hi && k.lo < box.hi)) continue;
    kept.push(box);
    visible.add(t);
  }
  return visible;
}

/**
 * Lines of at most `maxChars` characters, broken between words; a word longer than a line is split. Titles are
 * wrapped, never cut.
 */
export function wrapText(text: string, maxChars: number): string[] {
  const limit = Math.max(1, Math.floor(maxChars));
  const lines: string[] = [];
  let line = '';
  for (let word of text.split(/\s+/).filter(Boolean)) {
    while (word.length > limit) {
      if (line !== '') {
        lines.push(line);
        line = '';
      }
      lines.push(word.slice(0, limit));
      word = word.slice(limit);
    }
    const candidate = line === '' ? word : `${line} ${word}`;
    if (candidate.length > limit) {
      lines.push(line);
      line = word;
    } else {
      line = candidate;
    }
  }
  if (line !== '' || lines.length === 0) lines.push(line);
  return lines;
}

/** A multi-line <text>: one <tspan> per line, `lineHeight` apart, starting at baseline y. */
function multilineText(
  lines: readonly string[],
  x: number,
  y: number,
  lineHeight: number,
  cls: string,
  tooltip?: string,
): string {
  const spans = lines
    .map((l, i) => `<tspan x="${r(x)}" dy="${i === 0 ? 0 : lineHeight}">${escapeXml(l)}</tspan>`)
    .join('');
  return `<text x="${r(x)}" y="${r(y)}" class="${cls}">${spans}${tooltip ? `<title>${escapeXml(tooltip)}</title>` : ''}</text>`;
}

const TITLE_PX = 14;
const TITLE_LINE = 18;
const LEGEND_PX = 12;

export interface CdfSeries {
  readonly label: string;
  readonly color: string;
  readonly points: readonly CdfPoint[];
}

export interface CdfChartOptions {
  readonly scale: 'linear' | 'log';
  readonly title: string;
  readonly xLabel: string;
  readonly width?: number;
  readonly height?: number;
}

/**
 * An empirical CDF per series as a step line: fraction of requests (y, 0–1) with a value ≤ x. Light guide
 * lines at 50 % and 90 % let the reader take P50 and P90 off the chart.
 */
/**
 * The frame of a chart with a wrapped title above and a legend below the axis label, one entry per line (so it
 * never covers a curve, whatever their shapes): its size, margins, title lines and the legend's markup.
 */
function legendedChartFrame(
  title: string,
  series: readonly { readonly label: string; readonly color: string }[],
  width: number,
  left: number,
  plotHeight: number,
) {
  const titleLines = wrapText(title, (width - left - 8) / (TITLE_PX * 0.6));
  const legendLines = series.map((s) => wrapText(s.label, (width - left - 30 - 8) / (LEGEND_PX * 0.6)));
  const legendH = 8 + 18 * legendLines.reduce((n, l) => n + l.length, 0);
  const titleH = TITLE_LINE * (titleLines.length - 1);
  const height = plotHeight + legendH + titleH;
  const m = { left, right: 24, top: 36 + titleH, bottom: 48 + legendH };
  const legend = (): string => {
    const parts: string[] = [];
    let line = 0;
    series.forEach((s, i) => {
      const yy = height - legendH + 14 + 18 * line;
      parts.push(
        `<line x1="${m.left}" x2="${m.left + 22}" y1="${r(yy - 4)}" y2="${r(yy - 4)}" stroke="${s.color}" stroke-width="3"/>`,
      );
      parts.push(multilineText(legendLines[i], m.left + 30, yy, 18, 'legend-text'));
      line += legendLines[i].length;
    });
    return parts.join('');
  };
  return { width, height, m, titleLines, legend };
}

/**
 * The CDF's x axis over `values`: from 0 (linear, ending on a tick) or from the power of ten below the smallest
 * positive value to the one above the largest (log); a default range when there is nothing to plot.
 */
function cdfAxis(values: readonly number[], log: boolean): { lo: number; hi: number; ticks: number[] } {
  const positive = values.filter((v) => v > 0);
  let lo = log ? Math.min(...positive) : 0;
  let hi = Math.max(...values, 0);
  if (!Number.isFinite(lo) || !Number.isFinite(hi) || values.length === 0) {
    lo = log ? 1 : 0;
    hi = log ? 10 : 1;
  }
  let ticks: number[];
  if (log) {
    lo = Math.pow(10, Math.floor(Math.log10(lo)));
    hi = Math.max(Math.pow(10, Math.ceil(Math.log10(hi))), lo * 10);
    ticks = logTicks(lo, hi);
  } else {
    if (!(hi > 0)) hi = 1;
    ticks = linearTicks(0, hi);
    // End the axis on a tick: one step past the last tick when the data goes beyond it.
    const step = ticks.length > 1 ? ticks[1] - ticks[0] : hi;
    if (ticks[ticks.length - 1] < hi) ticks.push(Number((ticks[ticks.length - 1] + step).toPrecision(12)));
    hi = ticks[ticks.length - 1]!;
  }
  return { lo, hi, ticks };
}

export function cdfChart(series: readonly CdfSeries[], options: CdfChartOptions): string {
  const { width, height, m, titleLines, legend } = legendedChartFrame(
    options.title,
    series,
    options.width ?? 760,
    56,
    options.height ?? 380,
  );
  const plotW = width - m.left - m.right;
  const plotH = height - m.top - m.bottom;
  const log = options.scale === 'log';
  const { lo, hi, ticks } = cdfAxis(
    series.flatMap((s) => s.points.map((p) => p.value)),
    log,
  );
  const x = (v: number): number =>
    m.left +
    (log ? (Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo)) : (v - lo) / (hi - lo)) *
      plotW;
  const y = (f: number): number => m.top + (1 - f) * plotH;

  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeXml(options.title)}">`,
  );
  parts.push(multilineText(titleLines, m.left, 20, TITLE_LINE, 'chart-title'));
  // Grid and y axis: 0, 0.25, 0.5, 0.75, 0.9, 1.
  for (const f of [0, 0.25, 0.5, 0.75, 0.9, 1]) {
    const cls = f === 0.5 || f === 0.9 ? 'guide' : 'grid';
    parts.push(`<line x1="${m.left}" x2="${m.left + plotW}" y1="${r(y(f))}" y2="${r(y(f))}" class="${cls}"/>`);
    parts.push(
      `<text x="${m.left - 6}" y="${r(y(f) + 4)}" text-anchor="end" class="tick">${f === 0.9 ? 'P90' : f === 0.5 ? 'P50' : f.toFixed(2).replace(/\.?0+$/, '') || '0'}</text>`,
    );
  }
  const inside = ticks.filter((t) => x(t) >= m.left - 0.5 && x(t) <= m.left + plotW + 0.5);
  const labelled = visibleTickLabels(inside, x, formatTickMs);
  for (const t of inside) {
    const tx = x(t);
    parts.push(`<line x1="${r(tx)}" x2="${r(tx)}" y1="${m.top}" y2="${m.top + plotH}" class="grid"/>`);
    parts.push(`<line x1="${r(tx)}" x2="${r(tx)}" y1="${m.top + plotH}" y2="${m.top + plotH + 5}" class="axis"/>`);
    if (labelled.has(t))
      parts.push(
        `<text x="${r(tx)}" y="${m.top + plotH + 18}" text-anchor="middle" class="tick">${escapeXml(formatTickMs(t))}</text>`,
      );
  }
  parts.push(`<line x1="${m.left}" x2="${m.left + plotW}" y1="${m.top + plotH}" y2="${m.top + plotH}" class="axis"/>`);
  parts.push(`<line x1="${m.left}" x2="${m.left}" y1="${m.top}" y2="${m.top + plotH}" class="axis"/>`);
  parts.push(
    `<text x="${m.left + plotW / 2}" y="${m.top + plotH + 38}" text-anchor="middle" class="axis-label">${escapeXml(options.xLabel)}${log ? ' (log scale)' : ''}</text>`,
  );
  parts.push(
    `<text transform="translate(14 ${m.top + plotH / 2}) rotate(-90)" text-anchor="middle" class="axis-label">fraction of requests</text>`,
  );

  for (const s of series) {
    if (s.points.length === 0) continue;
    const first = s.points[0];
    let d = `M${r(x(first.value))} ${r(y(0))}`;
    let prevFraction = 0;
    for (const p of s.points) {
      d += `V${r(y(prevFraction))}H${r(x(p.value))}V${r(y(p.fraction))}`;
      prevFraction = p.fraction;
    }
    parts.push(
      `<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2" stroke-linejoin="round"><title>${escapeXml(s.label)}</title></path>`,
    );
  }

  parts.push(legend());
  parts.push('</svg>');
  return parts.join('');
}

/** Approximate width of one character of an 11px tick label. */
const TICK_CHAR_WIDTH = 6.5;

export interface InstanceBarsOptions {
  readonly title: string;
  readonly color: string;
  readonly width?: number;
  readonly height?: number;
  /**
   * Top of the share and in-flight axes. Pass the maxima over every strategy of a report so that their charts
   * share one y-scale and bars compare across charts; default: this strategy's own maxima.
   */
  readonly scale?: { readonly share: number; readonly inFlight: number };
}

/**
 * Two bar panels for one strategy: each instance's share of requests (dashed line = an even share), and its
 * time-weighted mean in-flight with a tick at its maximum.
 */
/** Where a bar panel draws: the chart's margins and plot height, the panel width, the instances and bar colour. */
interface BarPanelFrame {
  readonly m: { readonly top: number };
  readonly plotH: number;
  readonly panelW: number;
  readonly n: number;
  readonly instances: readonly InstanceSummary[];
  readonly color: string;
}

/** What one bar panel shows: its caption, scale and format, the bar's value, an optional marker and reference. */
interface BarPanelSpec {
  readonly left: number;
  readonly caption: string;
  readonly maxValue: number;
  readonly format: (v: number) => string;
  readonly value: (i: InstanceSummary) => number;
  readonly marker?: (i: InstanceSummary) => number;
  readonly reference?: number;
}

/** One panel of instanceBars: y grid and ticks, a bar (and marker) per instance with its label, the reference line. */
function barPanel(parts: string[], frame: BarPanelFrame, spec: BarPanelSpec): void {
  const { m, plotH, panelW, n, instances } = frame;
  const { left, caption, maxValue, format, value, marker, reference } = spec;
  const ticks = linearTicks(0, maxValue > 0 ? maxValue : 1, 4);
  const step = ticks.length > 1 ? ticks[1] - ticks[0] : maxValue;
  if (ticks[ticks.length - 1] < maxValue) ticks.push(Number((ticks[ticks.length - 1] + step).toPrecision(12)));
  const top = Math.max(ticks[ticks.length - 1], 1e-9);
  const y = (v: number): number => m.top + (1 - v / top) * plotH;
  parts.push(`<text x="${r(left)}" y="${m.top - 8}" class="panel-title">${escapeXml(caption)}</text>`);
  for (const t of ticks) {
    parts.push(`<line x1="${r(left)}" x2="${r(left + panelW)}" y1="${r(y(t))}" y2="${r(y(t))}" class="grid"/>`);
    parts.push(
      `<text x="${r(left - 5)}" y="${r(y(t) + 4)}" text-anchor="end" class="tick">${escapeXml(format(t))}</text>`,
    );
  }
  const slot = panelW / n;
  const barW = Math.max(2, Math.min(48, slot * 0.7));
  // Instance labels: short names when they fit the slot, else positions (#1…), thinned out when crowded.
  const names = instances.map((inst, i) => shortInstanceName(inst.id, i));
  const fits = (texts: readonly string[]): boolean => texts.every((t) => t.length * TICK_CHAR_WIDTH <= slot * 0.95);
  const positions = instances.map((_, i) => `#${i + 1}`);
  const labels = fits(names) ? names : positions;
  const widest = Math.max(...labels.map((t) => t.length), 1) * TICK_CHAR_WIDTH;
  const labelEvery = Math.ceil(widest / (slot * 0.95));
  instances.forEach((inst, i) => {
    const cx = left + slot * (i + 0.5);
    const v = value(inst);
    parts.push(
      `<rect x="${r(cx - barW / 2)}" y="${r(y(v))}" width="${r(barW)}" height="${r(Math.max(0, m.top + plotH - y(v)))}" fill="${frame.color}" fill-opacity="0.8"><title>${escapeXml(`${inst.id}: ${format(v)}`)}</title></rect>`,
    );
    if (marker) {
      const mv = marker(inst);
      parts.push(
        `<line x1="${r(cx - barW / 2 - 3)}" x2="${r(cx + barW / 2 + 3)}" y1="${r(y(mv))}" y2="${r(y(mv))}" class="marker"><title>${escapeXml(`${inst.id}: max ${format(mv)}`)}</title></line>`,
      );
    }
    if (labelEvery > 0 && i % labelEvery === 0) {
      parts.push(
        `<text x="${r(cx)}" y="${m.top + plotH + 14}" text-anchor="middle" class="tick">${escapeXml(labels[i])}</text>`,
      );
    }
  });
  if (reference !== undefined) {
    parts.push(
      `<line x1="${r(left)}" x2="${r(left + panelW)}" y1="${r(y(reference))}" y2="${r(y(reference))}" class="reference"/>`,
    );
  }
  parts.push(
    `<line x1="${r(left)}" x2="${r(left + panelW)}" y1="${m.top + plotH}" y2="${m.top + plotH}" class="axis"/>`,
  );
}

export function instanceBars(instances: readonly InstanceSummary[], options: InstanceBarsOptions): string {
  const width = options.width ?? 760;
  const titleLines = wrapText(options.title, (width - 48 - 8) / (TITLE_PX * 0.6));
  const titleH = TITLE_LINE * (titleLines.length - 1);
  const height = (options.height ?? 220) + titleH;
  const gap = 40;
  const m = { left: 48, right: 12, top: 40 + titleH, bottom: 40 };
  const panelW = (width - m.left - m.right - gap - 36) / 2;
  const plotH = height - m.top - m.bottom;
  const n = Math.max(instances.length, 1);
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeXml(options.title)}">`,
  );
  parts.push(multilineText(titleLines, m.left, 18, TITLE_LINE, 'chart-title'));

  const maxShare = Math.max(...instances.map((i) => i.share), 1 / n, options.scale?.share ?? 0);
  const frame: BarPanelFrame = { m, plotH, panelW, n, instances, color: options.color };
  barPanel(parts, frame, {
    left: m.left,
    caption: 'request share (dashed: even)',
    maxValue: maxShare,
    format: (v) => `${Math.round(v * 1000) / 10}%`,
    value: (i) => i.share,
    reference: 1 / n,
  });
  const maxInFlight = Math.max(...instances.map((i) => i.maxInFlight), 1, options.scale?.inFlight ?? 0);
  barPanel(parts, frame, {
    left: m.left + panelW + gap + 36,
    caption: 'in flight: mean (bar), max (tick)',
    maxValue: maxInFlight,
    format: (v) => (Number.isInteger(v) ? String(v) : v.toFixed(1)),
    value: (i) => i.meanInFlight,
    marker: (i) => i.maxInFlight,
  });
  parts.push(
    `<text x="${width / 2}" y="${height - 6}" text-anchor="middle" class="axis-label">instance (numbered as in the table)</text>`,
  );
  parts.push('</svg>');
  return parts.join('');
}

/** `text` cut to `max` characters with an ellipsis. */
export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(1, max - 1))}…`;
}

/** A short axis label for an instance id: the port of a URL, else a trimmed id, else its position. */
export function shortInstanceName(id: string, index: number): string {
  const port = /:(\d+)\/?$/.exec(id);
  if (port) return `:${port[1]}`;
  if (id.length <= 8) return id;
  return `#${index + 1}`;
}

export interface SizeCurveSeries {
  readonly label: string;
  readonly color: string;
  /** Measured points: instance count → the figure (null when the run had none). */
  readonly points: readonly { readonly instances: number; readonly value: number | null }[];
}

export interface SizeCurveChartOptions {
  readonly title: string;
  readonly yLabel: string;
  /** The bound drawn across the chart (the SLO). */
  readonly bound: number;
  readonly boundLabel: string;
  readonly formatValue: (v: number) => string;
  readonly width?: number;
  readonly height?: number;
}

/**
 * A figure against instance count, one line per strategy through the sizes that were measured (a search
 * measures only some), with the SLO bound as a dashed line: where a line crosses below it is the fleet size
 * the strategy needs. The y axis is capped at 4 × the bound so one overloaded size does not flatten the rest.
 */
export function sizeCurveChart(series: readonly SizeCurveSeries[], options: SizeCurveChartOptions): string {
  const { width, height, m, titleLines, legend } = legendedChartFrame(
    options.title,
    series,
    options.width ?? 760,
    64,
    options.height ?? 360,
  );
  const plotW = width - m.left - m.right;
  const plotH = height - m.top - m.bottom;
  const sizes = series.flatMap((s) => s.points.map((p) => p.instances));
  const xMin = Math.min(...sizes, 1);
  const xMax = Math.max(...sizes, xMin + 1);
  const cap = options.bound * 4;
  const values = series
    .flatMap((s) => s.points.map((p) => p.value))
    .filter((v): v is number => v !== null && Number.isFinite(v));
  let yMax = Math.min(cap, Math.max(options.bound * 1.25, ...values));
  const yTicks = linearTicks(0, yMax);
  const step = yTicks.length > 1 ? yTicks[1] - yTicks[0] : yMax;
  if (yTicks[yTicks.length - 1] < yMax) yTicks.push(Number((yTicks[yTicks.length - 1] + step).toPrecision(12)));
  yMax = yTicks[yTicks.length - 1]!;
  const x = (n: number): number => m.left + ((n - xMin) / (xMax - xMin)) * plotW;
  const y = (v: number): number => m.top + (1 - Math.min(v, yMax) / yMax) * plotH;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeXml(options.title)}">`,
  );
  parts.push(multilineText(titleLines, m.left, 20, TITLE_LINE, 'chart-title'));
  for (const t of yTicks) {
    parts.push(`<line x1="${m.left}" x2="${m.left + plotW}" y1="${r(y(t))}" y2="${r(y(t))}" class="grid"/>`);
    parts.push(
      `<text x="${m.left - 6}" y="${r(y(t) + 4)}" text-anchor="end" class="tick">${escapeXml(options.formatValue(t))}</text>`,
    );
  }
  const xTicks = linearTicks(xMin, xMax, Math.min(12, xMax - xMin)).filter((t) => Number.isInteger(t));
  const labelled = visibleTickLabels(xTicks, x, String);
  for (const t of xTicks) {
    parts.push(`<line x1="${r(x(t))}" x2="${r(x(t))}" y1="${m.top + plotH}" y2="${m.top + plotH + 5}" class="axis"/>`);
    if (labelled.has(t))
      parts.push(`<text x="${r(x(t))}" y="${m.top + plotH + 18}" text-anchor="middle" class="tick">${t}</text>`);
  }
  parts.push(`<line x1="${m.left}" x2="${m.left + plotW}" y1="${m.top + plotH}" y2="${m.top + plotH}" class="axis"/>`);
  parts.push(`<line x1="${m.left}" x2="${m.left}" y1="${m.top}" y2="${m.top + plotH}" class="axis"/>`);
  parts.push(
    `<text x="${m.left + plotW / 2}" y="${m.top + plotH + 38}" text-anchor="middle" class="axis-label">instances</text>`,
  );
  parts.push(
    `<text transform="translate(14 ${m.top + plotH / 2}) rotate(-90)" text-anchor="middle" class="axis-label">${escapeXml(options.yLabel)}</text>`,
  );
  const by = y(options.bound);
  parts.push(
    `<line x1="${m.left}" x2="${m.left + plotW}" y1="${r(by)}" y2="${r(by)}" stroke="#d62728" stroke-width="1.5" stroke-dasharray="6 4"/>`,
  );
  parts.push(
    `<text x="${m.left + plotW - 4}" y="${r(by - 6)}" text-anchor="end" class="tick" fill="#d62728">${escapeXml(options.boundLabel)}</text>`,
  );
  for (const s of series) {
    const points = s.points
      .filter((p) => p.value !== null && Number.isFinite(p.value))
      .sort((a, b) => a.instances - b.instances);
    if (points.length === 0) continue;
    const d = points.map((p, i) => `${i === 0 ? 'M' : 'L'}${r(x(p.instances))} ${r(y(p.value!))}`).join('');
    parts.push(
      `<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2" stroke-linejoin="round"><title>${escapeXml(s.label)}</title></path>`,
    );
    for (const p of points) {
      const over = p.value! > yMax;
      parts.push(
        `<circle cx="${r(x(p.instances))}" cy="${r(y(p.value!))}" r="3.5" fill="${over ? '#ffffff' : s.color}" stroke="${s.color}" stroke-width="1.5"><title>${escapeXml(`${s.label}: ${p.instances} instances, ${options.formatValue(p.value!)}`)}</title></circle>`,
      );
    }
  }
  parts.push(legend());
  parts.push('</svg>');
  return parts.join('');
}

export interface BandSeries {
  readonly label: string;
  readonly color: string;
  /** Measured points; null values (a run without the figure) are left out. */
  readonly points: readonly { readonly x: number; readonly value: number | null }[];
  /** A published range of the same figure, drawn as a shaded band across the chart (min ≤ max). */
  readonly band?: { readonly min: number; readonly max: number };
}

export interface BandChartOptions {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  /** Label of an x tick ("1.5×"). */
  readonly formatX: (x: number) => string;
  /** Label of a y tick and of a point's tooltip ("80 %"). */
  readonly formatValue: (v: number) => string;
  /** A vertical dashed guide with its label (e.g. where the threshold equals the mean per-instance load). */
  readonly guide?: { readonly x: number; readonly label: string };
  readonly yMin?: number;
  readonly yMax?: number;
  readonly width?: number;
  readonly height?: number;
  /** Embed the styles the HTML report's stylesheet gives (for an .svg file read on its own). */
  readonly standalone?: boolean;
}

/** The HTML report's `svg …` rules, for charts written as files of their own. */
const STANDALONE_STYLE = [
  'text { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; fill: #1d232a; }',
  '.chart-title { font-size: 14px; font-weight: 600; }',
  '.tick { font-size: 11px; fill: #4b5563; }',
  '.axis-label { font-size: 12px; fill: #4b5563; }',
  '.grid { stroke: #e5e7eb; stroke-width: 1; }',
  '.guide { stroke: #9ca3af; stroke-width: 1; stroke-dasharray: 4 3; }',
  '.axis { stroke: #6b7280; stroke-width: 1; }',
  '.legend-text { font-size: 12px; }',
].join(' ');

/**
 * Several figures against one continuous x, one line per figure through its measured points, each with the
 * published range it is compared with as a band of the same colour: where a line runs inside its band, that
 * setting reproduces the figure. Points are drawn where they were measured; nothing is interpolated beyond them.
 */
/** Each series' published range as a translucent band across the plot, at least 3 px high. */
function publishedBands(
  series: readonly BandSeries[],
  y: (v: number) => number,
  plot: { readonly left: number; readonly width: number },
  formatValue: (v: number) => string,
): string[] {
  const bands: string[] = [];
  for (const s of series) {
    if (!s.band) continue;
    const top = y(Math.max(s.band.min, s.band.max));
    const bottom = y(Math.min(s.band.min, s.band.max));
    // A point-like range (≈82 %) still shows as a thin band.
    const h = Math.max(bottom - top, 3);
    bands.push(
      `<rect x="${plot.left}" y="${r(top - (h - (bottom - top)) / 2)}" width="${r(plot.width)}" height="${r(h)}" fill="${s.color}" fill-opacity="0.15"><title>${escapeXml(`${s.label}: published ${formatValue(s.band.min)} … ${formatValue(s.band.max)}`)}</title></rect>`,
    );
  }
  return bands;
}

/** The y ticks of a band chart: every measured value and band inside, from yMin / yMax when given. */
function bandYTicks(series: readonly BandSeries[], options: BandChartOptions): number[] {
  const values = series
    .flatMap((s) => [...s.points.map((p) => p.value), s.band?.min ?? null, s.band?.max ?? null])
    .filter((v): v is number => v !== null && Number.isFinite(v));
  const lo = options.yMin ?? Math.min(0, ...values);
  const yTicks = linearTicks(lo, options.yMax ?? Math.max(...values, 1));
  // The ticks start at a round value at or above `lo`; one step more keeps the lowest point on the chart.
  const yStep = yTicks.length > 1 ? yTicks[1] - yTicks[0] : 1;
  if (yTicks[0] > lo) yTicks.unshift(Number((yTicks[0] - yStep).toPrecision(12)));
  return yTicks;
}

export function bandChart(series: readonly BandSeries[], options: BandChartOptions): string {
  const { width, height, m, titleLines, legend } = legendedChartFrame(
    options.title,
    series,
    options.width ?? 760,
    56,
    options.height ?? 380,
  );
  const plotW = width - m.left - m.right;
  const plotH = height - m.top - m.bottom;
  const xs = series.flatMap((s) =>
    s.points.filter((p) => p.value !== null && Number.isFinite(p.value)).map((p) => p.x),
  );
  const xMin = Math.min(...xs, options.guide?.x ?? Infinity);
  const xMax = Math.max(...xs, options.guide?.x ?? -Infinity, xMin + 1e-9);
  const yTicks = bandYTicks(series, options);
  const yLo = yTicks[0];
  const yHi = yTicks[yTicks.length - 1];
  const x = (v: number): number => m.left + ((v - xMin) / (xMax - xMin)) * plotW;
  const y = (v: number): number => m.top + (1 - (Math.max(yLo, Math.min(yHi, v)) - yLo) / (yHi - yLo)) * plotH;
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${escapeXml(options.title)}">`,
  );
  if (options.standalone)
    parts.push(`<style>${STANDALONE_STYLE}</style><rect width="${width}" height="${height}" fill="#ffffff"/>`);
  parts.push(multilineText(titleLines, m.left, 20, TITLE_LINE, 'chart-title'));
  parts.push(...publishedBands(series, y, { left: m.left, width: plotW }, options.formatValue));
  for (const t of yTicks) {
    parts.push(`<line x1="${m.left}" x2="${m.left + plotW}" y1="${r(y(t))}" y2="${r(y(t))}" class="grid"/>`);
    parts.push(
      `<text x="${m.left - 6}" y="${r(y(t) + 4)}" text-anchor="end" class="tick">${escapeXml(options.formatValue(t))}</text>`,
    );
  }
  const xTicks = linearTicks(xMin, xMax, 8);
  const labelled = visibleTickLabels(xTicks, x, options.formatX);
  for (const t of xTicks) {
    parts.push(`<line x1="${r(x(t))}" x2="${r(x(t))}" y1="${m.top + plotH}" y2="${m.top + plotH + 5}" class="axis"/>`);
    if (labelled.has(t))
      parts.push(
        `<text x="${r(x(t))}" y="${m.top + plotH + 18}" text-anchor="middle" class="tick">${escapeXml(options.formatX(t))}</text>`,
      );
  }
  parts.push(`<line x1="${m.left}" x2="${m.left + plotW}" y1="${m.top + plotH}" y2="${m.top + plotH}" class="axis"/>`);
  parts.push(`<line x1="${m.left}" x2="${m.left}" y1="${m.top}" y2="${m.top + plotH}" class="axis"/>`);
  parts.push(
    `<text x="${m.left + plotW / 2}" y="${m.top + plotH + 38}" text-anchor="middle" class="axis-label">${escapeXml(options.xLabel)}</text>`,
  );
  parts.push(
    `<text transform="translate(14 ${m.top + plotH / 2}) rotate(-90)" text-anchor="middle" class="axis-label">${escapeXml(options.yLabel)}</text>`,
  );
  if (options.guide) {
    const gx = x(options.guide.x);
    parts.push(`<line x1="${r(gx)}" x2="${r(gx)}" y1="${m.top}" y2="${m.top + plotH}" class="guide"/>`);
    parts.push(`<text x="${r(gx + 4)}" y="${m.top + 12}" class="tick">${escapeXml(options.guide.label)}</text>`);
  }
  for (const s of series) {
    const points = s.points
      .filter((p): p is { x: number; value: number } => p.value !== null && Number.isFinite(p.value))
      .sort((a, b) => a.x - b.x);
    if (points.length === 0) continue;
    const d = points.map((p, i) => `${i === 0 ? 'M' : 'L'}${r(x(p.x))} ${r(y(p.value))}`).join('');
    parts.push(
      `<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2" stroke-linejoin="round"><title>${escapeXml(s.label)}</title></path>`,
    );
    for (const p of points) {
      parts.push(
        `<circle cx="${r(x(p.x))}" cy="${r(y(p.value))}" r="3.5" fill="${s.color}"><title>${escapeXml(`${s.label}: ${options.formatX(p.x)}, ${options.formatValue(p.value)}`)}</title></circle>`,
      );
    }
  }
  parts.push(legend());
  parts.push('</svg>');
  return parts.join('');
}
