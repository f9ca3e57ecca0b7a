import type { RoutingRequest } from '../protocol/routing-request';
import { definePolicy } from './policy-definition';
import { prefixKey } from './prefix-key';
import { InstanceHashCache } from './rendezvous';
import type { InstanceView } from './routing-policy';
import { HEALTHY_FILTER } from './stages/healthy-filter';
import { prefixAffinityPicker, type PrefixKeyFacts } from './stages/prefix-affinity-picker';
import { SERVES_MODEL_FILTER } from './stages/serves-model-filter';
import { INSTANCES_AS_CANDIDATES, StagedPolicy } from './stages/staged-policy';
import { thresholdSpillPicker } from './stages/threshold-spill-picker';

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
 * Stateless: nothing is committed; the choice is a pure function of the key and the instance view.
 */
export class SageMakerPrefixAwarePolicy extends StagedPolicy<InstanceView, SageMakerPrefixAwareReason, PrefixKeyFacts> {
  constructor(readonly options: SageMakerPrefixAwareOptions) {
    const hashes = new InstanceHashCache();
    const threshold = options.concurrencyThreshold;
    super('sagemaker-prefix-aware', {
      factsOf: (request, snapshot) => ({ request, snapshot, key: prefixKey(request, options.prefixLength) }),
      instanceFilters: [SERVES_MODEL_FILTER, HEALTHY_FILTER],
      candidates: INSTANCES_AS_CANDIDATES,
      stages: [
        prefixAffinityPicker(threshold, 'prefix-affinity', hashes),
        thresholdSpillPicker(threshold, { spilled: 'threshold-spill', saturated: 'all-saturated' }, hashes),
      ],
    });
  }

  /** The 32-bit routing key of a request (exposed for tests, the simulator and diagnostics). */
  routingKey(request: RoutingRequest): number {
    return prefixKey(request, this.options.prefixLength);
  }
}

type SageMakerPrefixAwareReason = 'prefix-affinity' | 'threshold-spill' | 'all-saturated';

export const sageMakerPrefixAwareDefinition = definePolicy({
  name: 'sagemaker-prefix-aware',
  description:
    "SageMaker's PREFIX_AWARE: rendezvous hash of the first prefixLength characters/bytes (+ tenant key); spill to the fewest in flight at concurrencyThreshold",
  reasons: ['prefix-affinity', 'threshold-spill', 'all-saturated'],
  stages: [
    { kind: 'filter', name: 'serves-model' },
    { kind: 'filter', name: 'healthy' },
    { kind: 'picker', name: 'prefix-affinity' },
    { kind: 'picker', name: 'threshold-spill' },
  ],
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
