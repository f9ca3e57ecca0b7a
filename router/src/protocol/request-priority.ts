import type { JsonObject } from './json-body';
import type { RequestHeaders } from './request-headers';
import { RouterError } from './router-errors';
import { priorityTextProblem } from '../common/priority-text';

/**
 * A request's priority class (vLLM's `priority`, lower is sooner, 0 its default), for clients that cannot put it in
 * the body: the `x-prefix-router-priority` header, else the priority the API key file gives the caller's key. The
 * body's own `priority` wins over both (the client said what it wants); either sets the body's `priority` the
 * engine sees, and flow control (core/flow-control.ts) holds the request by it.
 */
export const PRIORITY_HEADER = 'x-prefix-router-priority';

/** The body's own `priority` when it is an integer (vLLM refuses anything else itself). */
export function bodyPriorityOf(json: JsonObject): number | undefined {
  const value = json.priority;
  return typeof value === 'number' && Number.isSafeInteger(value) ? value : undefined;
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
