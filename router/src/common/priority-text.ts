/**
 * A priority class as a user types it (vLLM's `priority`: an integer, lower is sooner, 0 its default): the one rule
 * for the x-prefix-router-priority header (protocol/request-priority.ts) and a key's `priority=N` in the API key
 * file (common/api-keys.ts), so both refuse the same text the same way.
 */

/** Priorities the header and the key file accept: a wide integer range that stays exact in JSON and in vLLM. */
export const PRIORITY_RANGE = { min: -1_000_000, max: 1_000_000 } as const;

/** Why `text` is not a priority (undefined: it is one); the header and the key file say it the same way. */
export function priorityTextProblem(text: string): string | undefined {
  const { min, max } = PRIORITY_RANGE;
  const value = /^-?\d{1,7}$/.test(text) ? Number(text) : NaN;
  return Number.isInteger(value) && value >= min && value <= max
    ? undefined
    : `must be an integer in ${min}..${max} (got ${JSON.stringify(text.slice(0, 32))})`;
}
