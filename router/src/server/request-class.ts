import type { ParsedRequest, RequestHeaders } from '../protocol/parse-request';
import { priorityToSet } from '../protocol/request-priority';
import { withJsonMember } from './engine-cache-salt';

/**
 * The request with the priority class its client could not put in the body (the x-prefix-router-priority header):
 * set as the body's `priority`, so the engine's priority scheduling sees what flow control saw. A body's own
 * `priority` wins and is forwarded untouched; a backend's own /invocations schema is not vLLM's and is not edited,
 * but the header still classes the request for flow control.
 */
export function withRequestPriority(
  parsed: ParsedRequest,
  headers: RequestHeaders,
  body: Buffer,
): [ParsedRequest, Buffer] {
  const priority = priorityToSet(parsed.ownPriority === true, headers, undefined);
  if (priority === undefined) return [parsed, body];
  return [{ ...parsed, priority }, parsed.jsonBody ? withJsonMember(body, 'priority', priority) : body];
}
