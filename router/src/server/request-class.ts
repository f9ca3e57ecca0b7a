import type { ParsedRequest, RequestHeaders } from '../protocol/parse-request';
import { priorityToSet } from '../protocol/request-priority';
import { withJsonMember } from './engine-cache-salt';

/**
 * The request with the priority class its client could not put in the body (the x-prefix-router-priority header,
 * else its API key's `priority=N`): set as the body's `priority`, so the engine's priority scheduling sees what
 * flow control saw. A body's own `priority` wins and is forwarded untouched; a backend's own /invocations schema is
 * not vLLM's and is not edited, but the header or key still classes the request for flow control.
 */
export function withRequestPriority(
  parsed: ParsedRequest,
  headers: RequestHeaders,
  body: Buffer,
  keyPriority?: number,
): [ParsedRequest, Buffer] {
  const priority = priorityToSet(parsed.ownPriority === true, headers, keyPriority);
  if (priority === undefined) return [parsed, body];
  return [{ ...parsed, priority }, parsed.jsonBody ? withJsonMember(body, 'priority', priority) : body];
}
