import type { RoutingRequest } from '../../../router/src/protocol/routing-request';
import type { EngineQueue, InstanceView, RoutingSnapshot } from '../../../router/src/policy';

export function chatRequest(routingText: string, tenantKey?: string): RoutingRequest {
  return { model: 'm', api: 'chat', keyBasis: 'message-text', routingText, tenantKey, stream: false };
}

export function bodyRequest(body: string | Uint8Array, tenantKey?: string): RoutingRequest {
  const rawBody = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return { model: '', api: 'invocations', keyBasis: 'body-bytes', routingText: '', rawBody, tenantKey, stream: false };
}

export function instances(count: number, inFlight = 0): InstanceView[] {
  return Array.from({ length: count }, (_, i) => ({ id: `http://10.0.0.${i + 1}:8000`, healthy: true, inFlight }));
}

export function snapshot(views: readonly InstanceView[]): RoutingSnapshot {
  return { instances: views, nowMs: 0 };
}

/** An idle engine's queue as the simulator reports it (InstanceView.engine.queue, read by oracle only). */
export const IDLE_ENGINE_QUEUE: EngineQueue = {
  prefillTokensAhead: 0,
  pendingPromptTokens: 0,
  stepInProgressTokens: 0,
  kvWaitTokens: 0,
  decodeSequences: 0,
  prefillingSequences: 0,
  stepTokens: 8192,
};
