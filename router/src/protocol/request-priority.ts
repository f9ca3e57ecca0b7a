import type { JsonObject } from './json-body';
import type { RequestHeaders } from './request-headers';
import { RouterError } from './router-errors';

/**
 * A request's priority class (vLLM's `priority`, lower is sooner, 0 its default), for clients that cannot put it in
 * the body: the `x-prefix-router-priority` header, else the priority the API key file gives the caller's key. The
 * body's own `priority` wins over both (the client said what it wants); either sets the body's `priority` the
 * engine sees, and flow control (core/flow-control.ts) holds the request by it.
 */
export const PRIORITY_HEADER = 'x-prefix-router-priority';

/** Priorities the header and the key file accept: a wide integer range that stays exact in JSON and in vLLM. */
export const PRIORITY_RANGE = { min: -1_000_000, max: 1_000_000 } as const;

/** The body's own `priority` when it is an integer (vLLM refuses anything else itself). */
export function bodyPriorityOf(json: JsonObject): number | undefined {
  const value = json.priority;
  return typeof value === 'number' && Number.isSafeInteger(value) ? value : undefined;
}

/** Why `text` is not a priority (undefined: it is one); the header and the key file say it the same way. */
export function priorityTextProblem(text: string): string | undefined {
  const { min, max } = PRIORITY_RANGE;
  const value = /^-?\d{1,7}$/.test(text) ? Number(text) : NaN;
  return Number.isInteger(value) && value >= min && value <= max
    ? undefined
    : `must be an integer in ${min}..${max} (got ${JSON.stringify(text.slice(0, 32))})`;
}

/** The header's priority; a malformed one is the client's 400 naming the header and the range. */
export function headerPriorityOf(headers: RequestHeaders): number | undefined {
  const raw = headers[PRIORITY_HEADER];
  if (raw === undefined) return undefined;
  const text = Array.isArray(raw) ? raw.join(',') : raw;
  const problem = priorityTextProblem(text.trim());
  if (problem !== undefined) throw new RouterError('invalid_priority', `${PRIORITY_HEADER} ${problem}`);
  return Number(text.trim());
}

/** The priority to add to the body, when the body has none of its own: the header's, else the key's. */
export function priorityToSet(
  ownPriority: boolean,
  headers: RequestHeaders,
  keyPriority: number | undefined,
): number | undefined {
  const fromHeader = headerPriorityOf(headers);
  if (ownPriority) return undefined;
  return fromHeader ?? keyPriority;
}
