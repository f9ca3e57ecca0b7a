/** Number formatting shared by the markdown and HTML renderers ("—" for unknown values). */
export const MISSING = '—';

/** Milliseconds as "87 ms", "1.24 s", "12.3 s". */
export function formatMs(ms: number | null): string {
  if (ms === null) return MISSING;
  if (Math.abs(ms) < 10) return `${ms.toFixed(1)} ms`;
  if (Math.abs(ms) < 1000) return `${Math.round(ms)} ms`;
  if (Math.abs(ms) < 10000) return `${(ms / 1000).toFixed(2)} s`;
  return `${(ms / 1000).toFixed(1)} s`;
}

/** A fraction 0–1 as "82.4 %". */
export function formatPercent(fraction: number | null, digits = 1): string {
  return fraction === null ? MISSING : `${(fraction * 100).toFixed(digits)} %`;
}

/** A signed percent delta as "−71.2 %" / "+15.0 %" (a real minus sign). */
export function formatDeltaPct(delta: number | null): string {
  if (delta === null) return MISSING;
  const rounded = Math.abs(delta) < 0.05 ? 0 : delta;
  return `${rounded > 0 ? '+' : rounded < 0 ? '−' : '±'}${Math.abs(rounded).toFixed(1)} %`;
}

/** Signed percentage points as "+57.3 pts". */
export function formatPoints(points: number | null): string {
  if (points === null) return MISSING;
  const rounded = Math.abs(points) < 0.05 ? 0 : points;
  return `${rounded > 0 ? '+' : rounded < 0 ? '−' : '±'}${Math.abs(rounded).toFixed(1)} pts`;
}

/** A plain number with a fixed number of decimals, grouped thousands. */
export function formatNumber(value: number | null, digits = 0): string {
  if (value === null) return MISSING;
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A ratio such as max/mean as "1.08×". */
export function formatRatio(value: number | null): string {
  return value === null ? MISSING : `${value.toFixed(2)}×`;
}

/** Microseconds as "412 µs" or "1.30 ms". */
export function formatMicros(us: number | null): string {
  if (us === null) return MISSING;
  return us < 1000 ? `${Math.round(us)} µs` : `${(us / 1000).toFixed(2)} ms`;
}

/** Longest message quoted beside an error count: enough for vLLM's context-length refusal, short of a wall. */
const ERROR_MESSAGE_CHARS = 200;

/**
 * A run's errors as one line, every renderer alike: `http_400 × 3 (first: "This model's maximum context length
 * is …")`: each code with its count, and the first message recorded for it when there is one.
 */
export function errorCountsText(summary: {
  readonly errorsByCode: Readonly<Record<string, number>>;
  readonly errorMessages?: Readonly<Record<string, string>>;
}): string {
  return Object.entries(summary.errorsByCode)
    .map(([code, n]) => {
      const message = summary.errorMessages?.[code];
      if (message === undefined) return `${code} × ${n}`;
      const shown = message.length > ERROR_MESSAGE_CHARS ? `${message.slice(0, ERROR_MESSAGE_CHARS - 1)}…` : message;
      return `${code} × ${n} (first: ${JSON.stringify(shown)})`;
    })
    .join(', ');
}
