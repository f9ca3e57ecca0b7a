import type { RoutingRequest } from '../protocol/routing-request';
import { CHARS_PER_TOKEN } from '../state/block-hash';

// The estimate is defined once, with the token and block model (state/block-hash.ts); policies import it here.
export { CHARS_PER_TOKEN };

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
