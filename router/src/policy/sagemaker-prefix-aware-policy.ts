import type { RoutingRequest } from '../protocol/routing-request';
import { definePolicy } from './policy-definition';
import { prefixKey } from './prefix-key';
import { InstanceHashCache, ranksAbove, rendezvousScore } from './rendezvous';
import {
  NoHealthyInstanceError,
  type InstanceView,
  type RoutingDecision,
  type RoutingPolicy,
  type RoutingSnapshot,
} from './routing-policy';

/** SageMaker's allowed ranges (PrefixAwareRoutingConfig in the SageMaker API reference). */
export const PREFIX_LENGTH_RANGE = { min: 1024, max: 65536 } as const;
export const CONCURRENCY_THRESHOLD_RANGE = { min: 1, max: 1024 } as const;

/**
 * Our defaults, the same as the construct's `RoutingStrategy.prefixAware()` (docs/construct.md explains them).
 * SageMaker has none: both fields are required with PREFIX_AWARE. 8192 characters (~2,048 tokens) cover a shared
 * system prompt plus the start of each conversation; 32 in-flight requests keep a hot instance's prefill queue
 * short before spilling.
 */
export const DEFAULT_PREFIX_LENGTH = 8192;
export const DEFAULT_CONCURRENCY_THRESHOLD = 32;

export interface SageMakerPrefixAwareOptions {
  readonly prefixLength: number;
  readonly concurrencyThreshold: number;
}

/**
 * SageMaker's PREFIX_AWARE strategy as documented: the request's prefix key picks an instance by rendezvous
 * hashing over the healthy instances ("prefix-affinity"). When that instance already has
 * `concurrencyThreshold` or more requests in flight, the request goes to the healthy instance with the most
 * spare capacity, i.e. the fewest in flight ("threshold-spill"). When every healthy instance is at or over
 * the threshold, the fewest-in-flight instance is still used ("all-saturated"): the router never queues or
 * rejects, like the managed endpoint, which keeps accepting requests. Ties on in-flight counts are broken by
 * rendezvous rank for the key (then by id), so replicas with the same view agree and a spilled prefix keeps
 * landing on the same second choice.
 *
 * Stateless: commit() does nothing. decide() allocates only the returned decision.
 */
export class SageMakerPrefixAwarePolicy implements RoutingPolicy {
  readonly name = 'sagemaker-prefix-aware' as const;
  private readonly hashes = new InstanceHashCache();

  constructor(readonly options: SageMakerPrefixAwareOptions) {}

  /** The 32-bit routing key of a request (exposed for tests, the simulator and diagnostics). */
  routingKey(request: RoutingRequest): number {
    return prefixKey(request, this.options.prefixLength);
  }

  decide(request: RoutingRequest, snapshot: RoutingSnapshot): RoutingDecision {
    const key = this.routingKey(request);
    const threshold = this.options.concurrencyThreshold;
    let affinity: InstanceView | undefined;
    let affinityScore = 0;
    let least: InstanceView | undefined;
    let leastScore = 0;
    const instances = snapshot.instances;
    for (let i = 0; i < instances.length; i++) {
      const instance = instances[i];
      if (!instance.healthy) continue;
      const score = rendezvousScore(key, this.hashes.get(instance.id));
      if (affinity === undefined || ranksAbove(score, instance.id, affinityScore, affinity.id)) {
        affinity = instance;
        affinityScore = score;
      }
      if (
        least === undefined ||
        instance.inFlight < least.inFlight ||
        (instance.inFlight === least.inFlight && ranksAbove(score, instance.id, leastScore, least.id))
      ) {
        least = instance;
        leastScore = score;
      }
    }
    if (affinity === undefined || least === undefined) throw new NoHealthyInstanceError();
    if (affinity.inFlight < threshold) return { instance: affinity.id, reason: 'prefix-affinity' };
    if (least.inFlight < threshold) return { instance: least.id, reason: 'threshold-spill' };
    return { instance: least.id, reason: 'all-saturated' };
  }

  commit(): void {
    // Nothing to remember: the choice is a pure function of the key and the instance view.
  }

  release(): void {
    // Stateless.
  }
}

export const sageMakerPrefixAwareDefinition = definePolicy({
  name: 'sagemaker-prefix-aware',
  description:
    "SageMaker's PREFIX_AWARE: rendezvous hash of the first prefixLength characters/bytes (+ tenant key); spill to the fewest in flight at concurrencyThreshold",
  reasons: ['prefix-affinity', 'threshold-spill', 'all-saturated'],
  options: [
    {
      name: 'prefixLength',
      type: 'integer',
      ...PREFIX_LENGTH_RANGE,
      default: DEFAULT_PREFIX_LENGTH,
      valueName: 'n',
      doc: "characters (OpenAI paths) or body bytes (InvokeEndpoint) keyed on; SageMaker's range; default = the construct's",
    },
    {
      name: 'concurrencyThreshold',
      type: 'integer',
      ...CONCURRENCY_THRESHOLD_RANGE,
      default: DEFAULT_CONCURRENCY_THRESHOLD,
      valueName: 'n',
      doc: "in-flight requests on the affinity instance at which a request spills; SageMaker's range; default = the construct's",
    },
  ],
  create: (options) =>
    new SageMakerPrefixAwarePolicy({
      prefixLength: options.prefixLength,
      concurrencyThreshold: options.concurrencyThreshold,
    }),
});
