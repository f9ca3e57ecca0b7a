import { Pool } from 'undici';

/** One request's timings, in microseconds from its send time. */
export interface Sample {
  /** Time to the first response body byte. */
  readonly firstByteUs: number;
  /** Time to the end of the response body. */
  readonly totalUs: number;
}

export interface PathResult {
  readonly samples: Sample[];
  readonly errors: number;
}

export interface Target {
  readonly pool: Pool;
  readonly path: string;
}

export function percentile(sortedAscending: readonly number[], p: number): number {
  if (sortedAscending.length === 0) return NaN;
  const rank = Math.min(sortedAscending.length - 1, Math.max(0, Math.ceil((p / 100) * sortedAscending.length) - 1));
  return sortedAscending[rank];
}

export function sorted(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

/**
 * Sends one POST and times it; a non-2xx status or an error counts as an error (resolves undefined). Uses
 * undici's dispatch handler API, the cheapest client path, so the load generator takes as little CPU as possible
 * from the processes it measures on a small machine.
 */
export function timedPost(target: Target, body: Buffer): Promise<Sample | undefined> {
  return new Promise((resolve) => {
    const start = process.hrtime.bigint();
    let first: bigint | undefined;
    let status = 0;
    try {
      target.pool.dispatch(
        { method: 'POST', path: target.path, body, headers: { 'content-type': 'application/json' } },
        {
          // undici treats a handler without onRequestStart as the legacy (onConnect/onHeaders) kind.
          onRequestStart() {},
          onResponseStart(_c, statusCode) {
            status = statusCode;
          },
          onResponseData() {
            first ??= process.hrtime.bigint();
          },
          onResponseEnd() {
            const end = process.hrtime.bigint();
            if (status < 200 || status >= 300) resolve(undefined);
            else resolve({ firstByteUs: Number((first ?? end) - start) / 1000, totalUs: Number(end - start) / 1000 });
          },
          onResponseError() {
            resolve(undefined);
          },
        },
      );
    } catch {
      resolve(undefined);
    }
  });
}

/**
 * Open loop: `ratePerTarget` requests per second to each target, interleaved (direct, routed, direct, ...)
 * so both paths see the same machine noise, for `count` requests per target or until `maxMs`.
 */
export async function openLoop(
  targets: readonly Target[],
  bodies: readonly Buffer[],
  ratePerTarget: number,
  count: number,
  maxMs: number,
): Promise<PathResult[]> {
  const results = targets.map(() => ({ samples: [] as Sample[], errors: 0 }));
  const pending = new Set<Promise<void>>();
  const totalRate = ratePerTarget * targets.length;
  const total = count * targets.length;
  const started = performance.now();
  let sent = 0;
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const elapsed = performance.now() - started;
      const due = Math.min(total, Math.floor((elapsed / 1000) * totalRate) + 1);
      while (sent < due) {
        const i = sent % targets.length;
        const body = bodies[Math.floor(sent / targets.length) % bodies.length];
        const p = timedPost(targets[i], body).then((s) => {
          if (s === undefined) results[i].errors++;
          else results[i].samples.push(s);
          pending.delete(p);
        });
        pending.add(p);
        sent++;
      }
      if (sent >= total || elapsed > maxMs) resolve();
      else setTimeout(tick, 1);
    };
    tick();
  });
  await Promise.all(pending);
  return results;
}

/** Closed loop: `concurrency` workers send back to back to one target for `durationMs`. Returns requests/s. */
export async function closedLoop(
  target: Target,
  bodies: readonly Buffer[],
  concurrency: number,
  durationMs: number,
): Promise<{ rps: number; done: number; errors: number }> {
  const deadline = performance.now() + durationMs;
  let done = 0;
  let errors = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const s = await timedPost(target, bodies[next++ % bodies.length]);
        if (s === undefined) errors++;
        else done++;
      }
    }),
  );
  return { rps: done / ((performance.now() - started) / 1000), done, errors };
}
