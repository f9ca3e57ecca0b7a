/**
 * The least-squares fit of prefill step times, `base + us·new + ns·new·(cached + new/2)`, on relative error: used by
 * `npm run bench:h200-fit` (the h200-llama-3.1-8b profile) and by the derived profiles' efficiency factors
 * (derived-profile.ts), both on the H200 measurements in router/profiles/measurements/.
 */
import type { StepTimeCoefficients } from './engine-profile';

/** One measured prefill: `newTokens` computed in one forward over `cachedTokens` already in the KV cache. */
export interface PrefillRow {
  readonly cachedTokens: number;
  readonly newTokens: number;
  readonly measuredMs: number;
}

export type PrefillFit = Pick<StepTimeCoefficients, 'baseMs' | 'usPerScheduledToken' | 'attentionNsPerTokenPair'>;

/** Solves a 3×3 linear system by Gaussian elimination with partial pivoting. */
function solve3(a: number[][], b: number[]): number[] {
  const m = a.map((row, i) => [...row, b[i]]);
  for (let col = 0; col < 3; col++) {
    let pivot = col;
    for (let r = col + 1; r < 3; r++) if (Math.abs(m[r][col]) > Math.abs(m[pivot][col])) pivot = r;
    if (Math.abs(m[pivot][col]) < 1e-12)
      throw new Error('prefill fit: singular system (need at least 3 distinct prompt lengths)');
    [m[col], m[pivot]] = [m[pivot], m[col]];
    for (let r = col + 1; r < 3; r++) {
      const f = m[r][col] / m[col][col];
      for (let c = col; c < 4; c++) m[r][c] -= f * m[col][c];
    }
  }
  const x = [0, 0, 0];
  for (let r = 2; r >= 0; r--) {
    let s = m[r][3];
    for (let c = r + 1; c < 3; c++) s -= m[r][c] * x[c];
    x[r] = s / m[r][r];
  }
  return x;
}

/**
 * Least squares on relative error of `base + us·new + ns·new·(cached + new/2)` over `rows`. Columns are
 * scaled (thousands of tokens, millions of pairs) so the normal equations are well conditioned; in those units
 * the coefficients come out directly in µs per token and ns per pair.
 */
export function fitPrefill(rows: readonly PrefillRow[]): PrefillFit {
  if (rows.length < 3) throw new Error(`prefill fit: need at least 3 rows, got ${rows.length}`);
  const ata = [
    [0, 0, 0],
    [0, 0, 0],
    [0, 0, 0],
  ];
  const atb = [0, 0, 0];
  for (const row of rows) {
    const x = [1, row.newTokens / 1e3, (row.newTokens * (row.cachedTokens + row.newTokens / 2)) / 1e6].map(
      (v) => v / row.measuredMs,
    );
    for (let i = 0; i < 3; i++) {
      atb[i] += x[i]; // target measured/measured = 1
      for (let j = 0; j < 3; j++) ata[i][j] += x[i] * x[j];
    }
  }
  const [baseMs, usPerScheduledToken, attentionNsPerTokenPair] = solve3(ata, atb);
  return { baseMs, usPerScheduledToken, attentionNsPerTokenPair };
}
