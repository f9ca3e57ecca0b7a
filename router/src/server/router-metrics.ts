import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { BackendSet } from './backend';

/**
 * Prometheus metrics of one router, in a private Registry (several routers can live in one process, e.g. in
 * the demo and in tests). Served at GET /metrics.
 */
export class RouterMetrics {
  readonly registry = new Registry();

  /** Routed requests by outcome. status: the HTTP status sent, '499' when the client went away first,
   *  'stream_error' when the backend failed after the response started. */
  readonly requests = new Counter({
    name: 'prefix_router_requests_total',
    help: 'Routed requests by policy, decision reason, instance and final status',
    labelNames: ['policy', 'reason', 'instance', 'status'] as const,
    registers: [this.registry],
  });

  readonly rejected = new Counter({
    name: 'prefix_router_rejected_requests_total',
    help: 'Requests answered with an error before any backend was chosen, by error code',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });

  /** Flow control by priority class (flow-gate.ts): requests that waited at the router, and how long. */
  readonly flowControlHeld = new Counter({
    name: 'prefix_router_flow_control_held_total',
    help: 'Requests with a priority above 0 held at the router because the chosen engine had too much prefill queued',
    registers: [this.registry],
  });

  readonly flowControlWaiting = new Gauge({
    name: 'prefix_router_flow_control_waiting',
    help: 'Requests waiting at the router now (flow control by priority class)',
    registers: [this.registry],
  });

  readonly flowControlWaitSeconds = new Histogram({
    name: 'prefix_router_flow_control_wait_seconds',
    help: 'Time held requests waited at the router before they were routed',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [this.registry],
  });

  readonly decisions = new Counter({
    name: 'prefix_router_decisions_total',
    help: 'Routing decisions by policy, reason and chosen instance (a retried request counts twice)',
    labelNames: ['policy', 'reason', 'instance'] as const,
    registers: [this.registry],
  });

  readonly retries = new Counter({
    name: 'prefix_router_retries_total',
    help: 'Requests retried on another instance because this instance refused the connection',
    labelNames: ['instance'] as const,
    registers: [this.registry],
  });

  readonly decisionSeconds = new Histogram({
    name: 'prefix_router_decision_duration_seconds',
    help: 'Time the policy took to decide (key hashing included)',
    labelNames: ['policy'] as const,
    buckets: [1e-6, 2e-6, 5e-6, 1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2],
    registers: [this.registry],
  });

  readonly upstreamTtftSeconds = new Histogram({
    name: 'prefix_router_upstream_ttft_seconds',
    help: 'Time from dispatch to the first response body byte from the backend',
    labelNames: ['instance'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });

  /** Prompt tokens of completed requests whose response reported cached_tokens (the denominator of the two below). */
  readonly promptTokens = new Counter({
    name: 'prefix_router_usage_prompt_tokens_total',
    help: 'Engine-reported prompt tokens of completed requests that reported cached_tokens',
    labelNames: ['instance'] as const,
    registers: [this.registry],
  });

  readonly predictedCachedTokens = new Counter({
    name: 'prefix_router_predicted_cached_tokens_total',
    help: 'Prompt tokens the policy predicted the instance would serve from its prefix cache (requests that reported cached_tokens)',
    labelNames: ['instance'] as const,
    registers: [this.registry],
  });

  readonly deliveredCachedTokens = new Counter({
    name: 'prefix_router_delivered_cached_tokens_total',
    help: 'Prompt tokens the engine reported served from its prefix cache (usage.prompt_tokens_details.cached_tokens)',
    labelNames: ['instance'] as const,
    registers: [this.registry],
  });

  constructor(backends: BackendSet) {
    new Gauge({
      name: 'prefix_router_in_flight_requests',
      help: 'Requests dispatched to the instance and not finished',
      labelNames: ['instance'] as const,
      registers: [this.registry],
      collect() {
        for (const b of backends.list) this.set({ instance: b.id }, b.inFlight);
      },
    });
    new Gauge({
      name: 'prefix_router_queued_prefill_tokens',
      help: 'Estimated prompt tokens of in-flight requests that have not produced a first token, less predicted cached',
      labelNames: ['instance'] as const,
      registers: [this.registry],
      collect() {
        for (const b of backends.list) this.set({ instance: b.id }, b.queuedPrefillTokens);
      },
    });
    new Gauge({
      name: 'prefix_router_decode_sequences',
      help: 'In-flight requests past their first token',
      labelNames: ['instance'] as const,
      registers: [this.registry],
      collect() {
        for (const b of backends.list) this.set({ instance: b.id }, b.decodeSequences);
      },
    });
    new Gauge({
      name: 'prefix_router_instance_state_age_seconds',
      help: "Seconds since the instance's published state was last observed (--observe-instances on; absent while none is held)",
      labelNames: ['instance'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        if (!backends.observing) return;
        const now = Date.now();
        for (const b of backends.list)
          if (b.observation.observed) this.set({ instance: b.id }, (now - b.observation.observedAtMs) / 1000);
      },
    });
    new Gauge({
      name: 'prefix_router_backend_healthy',
      help: '1 when the instance is routable, 0 while pending its first check or ejected',
      labelNames: ['instance'] as const,
      registers: [this.registry],
      collect() {
        for (const b of backends.list) this.set({ instance: b.id }, b.healthy ? 1 : 0);
      },
    });
  }
}
