import { chatTemplate } from '../emulator/chat-template';
import type { JsonObject } from '../protocol/json-body';
import { routingRequestFromOpenAiJson } from '../protocol/parse-request';
import type { RoutingRequest } from '../protocol/routing-request';
import { toOpenAiBody, type WorkloadRequest } from '../workload/workload-request';

/**
 * What the router would see of a workload request sent over the OpenAI-compatible API: the protocol layer's
 * own reader applied to the same body the live benchmark sends, so simulated and live runs key requests
 * identically.
 */
export function routingRequestOf(request: WorkloadRequest, model: string): RoutingRequest {
  const body = toOpenAiBody(request, { model }) as JsonObject;
  return routingRequestFromOpenAiJson(body, request.kind === 'chat' ? 'chat' : 'completions');
}

/** The text the engine tokenizes for the request: the chat template for chat, the prompt for completions. */
export function renderedPromptOf(request: WorkloadRequest): string {
  return request.kind === 'chat' ? chatTemplate(request.messages) : request.prompt;
}
