// Globals are looked up once: in vm contexts (Jest runs tests in one) each global access in a hot loop is slow.
const max = Math.max;
const min = Math.min;

/**
 * In-flight load of one instance over a window, computed exactly from request intervals (dispatch → end)
 * rather than sampled: the same for live and simulated runs, and independent of any sampling rate.
 */
export interface InFlightLoad {
  /** Time-weighted mean of requests in flight over the window. */
  readonly meanInFlight: number;
  /** Highest number of requests in flight at any instant of the window. */
  readonly maxInFlight: number;
}

export interface Interval {
  readonly startMs: number;
  readonly endMs: number;
}

/**
 * Mean = Σ (overlap of each interval with the window) / window length. Max: sweep over starts and ends; at
 * equal times an end is counted before a start (a slot freed and reused at one instant is not two in flight).
 * Intervals of zero length (or outside the window) overlap nothing and are ignored.
 */
export function inFlightLoad(intervals: Iterable<Interval>, windowStartMs: number, windowEndMs: number): InFlightLoad {
  const length = windowEndMs - windowStartMs;
  if (!(length > 0)) return { meanInFlight: 0, maxInFlight: 0 };
  let busy = 0;
  const starts: number[] = [];
  const ends: number[] = [];
  for (const { startMs, endMs } of intervals) {
    const s = max(startMs, windowStartMs);
    const e = min(endMs, windowEndMs);
    if (!(e > s)) continue;
    busy += e - s;
    starts.push(s);
    ends.push(e);
  }
  starts.sort((a, b) => a - b);
  ends.sort((a, b) => a - b);
  let current = 0;
  let highest = 0;
  let j = 0;
  for (const s of starts) {
    while (j < ends.length && ends[j] <= s) {
      current--;
      j++;
    }
    current++;
    if (current > highest) highest = current;
  }
  return { meanInFlight: busy / length, maxInFlight: highest };
}
