import type { RoutingRequest } from '../protocol/routing-request';

/** Characters per token: the project's one token estimate (docs: 1 token = 4 characters of prompt text). */
export const CHARS_PER_TOKEN = 4;

/**
 * The router's estimate of a request's prompt tokens, with no tokenizer: its routing text at 4 characters per
 * token, or for an opaque /invocations body (no routing text) its bytes at 4 per token.
 */
export function estimatedPromptTokens(request: RoutingRequest): number {
  // Read once: a simulated request's routing text is decoded on every read (sim/prompt-worker.ts).
  const textChars = request.routingText.length;
  const chars = textChars > 0 ? textChars : (request.rawBody?.length ?? 0);
  return Math.ceil(chars / CHARS_PER_TOKEN);
}
