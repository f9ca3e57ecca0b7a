/**
 * The sampling noise beside bench:peers' whole-trace figures (issue 37): one run's requests cut, in workload order,
 * into fixed windows of `size` requests, and in each window cache-aware's P50 and P90 TTFT over its requests there
 * against the best peer's over the same requests. A median of 200 requests can fall in a gap of the TTFT
 * distribution, where one request moves it by a fifth; the spread over the windows shows how far a 200-request
 * sample can stray from the whole run's figure. Pure: records in, ratios out.
 */
import type { RequestRecord } from '../src/report';
import { geometricMean, percentile } from '../src/report/stats';

/** One percentile's ratio to the best peer's over the measured windows. */
export interface RatioSpread {
  readonly min: number;
  readonly geometricMean: number;
  readonly max: number;
  /** Windows whose ratio is at most the target. */
  readonly withinTarget: number;
}

export interface WindowSpread {
  /** Requests per window. */
  readonly size: number;
  /** Full windows (the requests after the last full one are in none). */
  readonly windows: number;
  /** Requests in no window. */
  readonly leftOver: number;
  /** Windows left out of the spread because cache-aware or every peer had no first token in them. */
  readonly unmeasured: number;
  readonly target: number;
  /** Null when no window was measured. */
  readonly p50: RatioSpread | null;
  readonly p90: RatioSpread | null;
}

type TtftById = ReadonlyMap<string, number>;

function ttftById(records: readonly RequestRecord[]): TtftById {
  const byId = new Map<string, number>();
  for (const r of records) if (r.ttftMs !== null) byId.set(r.id, r.ttftMs);
  return byId;
}

/** A run's TTFT percentile over the given requests (those with a first token); null when none had one. */
function windowPercentile(run: TtftById, ids: readonly string[], p: number): number | null {
  const values = ids.map((id) => run.get(id)).filter((v): v is number => v !== undefined);
  return percentile(values, p);
}

/** cache-aware's percentile over the lowest peer's in one window; null when either side has none. */
function windowRatio(subject: TtftById, peers: readonly TtftById[], ids: readonly string[], p: number): number | null {
  const own = windowPercentile(subject, ids, p);
  const best = Math.min(...peers.map((peer) => windowPercentile(peer, ids, p)).filter((v): v is number => v !== null));
  return own === null || !Number.isFinite(best) || best <= 0 ? null : own / best;
}

function spreadOf(ratios: readonly number[], target: number): RatioSpread | null {
  const mean = geometricMean(ratios);
  if (mean === null) return null;
  return {
    min: Math.min(...ratios),
    geometricMean: mean,
    max: Math.max(...ratios),
    withinTarget: ratios.filter((r) => r <= target).length,
  };
}

/**
 * The spread of cache-aware's P50 and P90 TTFT ÷ the best peer's over windows of `size` requests of `order` (the
 * workload's request ids, in its order). The best peer is chosen per window and per percentile, as the whole-run
 * verdict chooses it per percentile. A window counts only if both percentiles have a ratio.
 */
export function windowSpread(
  order: readonly string[],
  subject: readonly RequestRecord[],
  peers: readonly (readonly RequestRecord[])[],
  size: number,
  target: number,
): WindowSpread {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`window size must be an integer ≥ 1 (got ${size})`);
  const own = ttftById(subject);
  const others = peers.map(ttftById);
  const windows = Math.floor(order.length / size);
  const p50: number[] = [];
  const p90: number[] = [];
  for (let w = 0; w < windows; w++) {
    const ids = order.slice(w * size, (w + 1) * size);
    const at50 = windowRatio(own, others, ids, 50);
    const at90 = windowRatio(own, others, ids, 90);
    if (at50 === null || at90 === null) continue;
    p50.push(at50);
    p90.push(at90);
  }
  return {
    size,
    windows,
    leftOver: order.length - windows * size,
    unmeasured: windows - p50.length,
    target,
    p50: spreadOf(p50, target),
    p90: spreadOf(p90, target),
  };
}

function spreadText(name: string, s: RatioSpread, measured: number, target: number): string {
  return `${name} ${s.min.toFixed(2)}–${s.max.toFixed(2)}× (geometric mean ${s.geometricMean.toFixed(2)}×, ≤ ${target}× in ${s.withinTarget} of ${measured})`;
}

/** The docs line under a trace workload's table. */
export function windowSpreadLine(s: WindowSpread): string {
  const head = `- Sampling noise: this run cut into ${s.windows} windows of ${s.size} requests in arrival order (requests 0–${s.size - 1}, ${s.size}–${2 * s.size - 1}, …${s.leftOver > 0 ? `; the last ${s.leftOver} in none` : ''}), cache-aware's TTFT ÷ the best peer's over the same requests in each window`;
  if (s.p50 === null || s.p90 === null) return `${head}: no window measured.`;
  const measured = s.windows - s.unmeasured;
  const skipped = s.unmeasured > 0 ? ` (${s.unmeasured} without a first token on one side left out)` : '';
  return `${head}${skipped}: ${spreadText('P50', s.p50, measured, s.target)}; ${spreadText('P90', s.p90, measured, s.target)}.`;
}
