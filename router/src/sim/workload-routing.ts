import { chatTemplate } from '../emulator/chat-template';
import type { JsonObject } from '../protocol/json-body';
import { readChatFields } from '../protocol/openai-chat';
import { readCompletionFields } from '../protocol/openai-completions';
import type { RoutingRequest } from '../protocol/routing-request';
import { tenantKeyOf } from '../protocol/tenant-key';
import { toOpenAiBody, type WorkloadRequest } from './workload/workload-request';

/**
 * What the router would see of a workload request sent over the OpenAI-compatible API: the same field readers
 * the HTTP protocol layer uses, applied to the same body the live benchmark sends, so simulated and live runs
 * key requests identically.
 */
export function routingRequestOf(request: WorkloadRequest, model: string): RoutingRequest {
  const body = toOpenAiBody(request, { model }) as JsonObject;
  if (request.kind === 'chat') {
    const fields = readChatFields(body);
    return {
      model: fields.model,
      api: 'chat',
      keyBasis: 'message-text',
      routingText: fields.routingText,
      tenantKey: tenantKeyOf(undefined, fields.promptCacheKey),
      sessionKey: fields.user,
      stream: fields.stream,
    };
  }
  const fields = readCompletionFields(body);
  return {
    model: fields.model,
    api: 'completions',
    keyBasis: 'message-text',
    routingText: fields.routingText,
    tenantKey: tenantKeyOf(undefined, fields.promptCacheKey),
    sessionKey: fields.user,
    stream: fields.stream,
  };
}

/** The text the engine tokenizes for the request: the chat template for chat, the prompt for completions. */
export function renderedPromptOf(request: WorkloadRequest): string {
  return request.kind === 'chat' ? chatTemplate(request.messages) : request.prompt;
}
