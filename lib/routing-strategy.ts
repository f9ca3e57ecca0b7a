import { aws_sagemaker as sagemaker } from 'aws-cdk-lib';
import { ProblemCollector } from './private/validation';

/** SageMaker's `RoutingStrategy` values for a production variant. */
export enum RoutingStrategyKind {
  /** Same request prefix (+ tenant key) → same instance, while that instance has headroom. */
  PREFIX_AWARE = 'PREFIX_AWARE',
  /** The instance with the fewest in-flight requests. */
  LEAST_OUTSTANDING_REQUESTS = 'LEAST_OUTSTANDING_REQUESTS',
  /** A random instance (SageMaker's default). */
  RANDOM = 'RANDOM',
}

/** Options of `RoutingStrategy.prefixAware()`. */
export interface PrefixAwareRoutingOptions {
  /**
   * How much of each request forms the routing key: bytes of the body for `InvokeEndpoint` and
   * `InvokeEndpointWithResponseStream`, characters of the message text on the OpenAI-compatible path.
   * Requests whose first `prefixLength` bytes/characters are equal go to the same instance.
   *
   * Allowed: 1024–65536.
   *
   * @default 8192 - ≈ 2,048 tokens at 4 characters per token. For chat prompts of ~8k tokens that share a
   * system prompt of up to ~1.5k tokens, the key covers the whole shared prefix plus the start of what is
   * specific to a conversation or document. Distinct conversations therefore spread over the fleet, while
   * every later turn of one conversation (whose first 8 KiB stop changing once it is longer than that) keeps
   * landing on the instance that already holds its KV cache. A much shorter key puts every request behind a
   * common system prompt on one instance (only `concurrencyThreshold` spreads them); a much longer one changes
   * with every turn of a short conversation, so follow-up turns lose their instance.
   */
  readonly prefixLength?: number;

  /**
   * In-flight requests on the prefix-selected instance at which SageMaker stops honouring the prefix and
   * sends the request to an instance with more free capacity.
   *
   * Allowed: 1–1024.
   *
   * @default 32 - sized for Llama 3.1 70B BF16 at TP 8 on ml.p5.48xlarge, whose KV cache holds ~1.35 M tokens
   * (~158 sequences of 8.5k tokens). 32 running 8k-token requests use about a fifth of it, so the cached
   * prefixes of other conversations survive, and the prefill queued behind a burst stays short. Above that,
   * queued prefill work, not cache misses, dominates time to first token, and spilling is the better trade.
   */
  readonly concurrencyThreshold?: number;
}

/** An inclusive range of integers: the values SageMaker documents for a setting. */
export interface IntegerRange {
  /** Smallest allowed value. */
  readonly min: number;
  /** Largest allowed value. */
  readonly max: number;
}

/**
 * How the endpoint spreads requests over its instances. Always rendered as `RoutingConfig.RoutingStrategy`;
 * `PrefixAwareRoutingConfig` is rendered only for `PREFIX_AWARE`.
 */
export class RoutingStrategy {
  /** Default routing key length in bytes/characters. */
  public static readonly DEFAULT_PREFIX_LENGTH = 8192;
  /** Default in-flight threshold before spilling to another instance. */
  public static readonly DEFAULT_CONCURRENCY_THRESHOLD = 32;
  /** SageMaker's allowed range for `PrefixLength`. */
  public static readonly PREFIX_LENGTH_RANGE: IntegerRange = { min: 1024, max: 65536 };
  /** SageMaker's allowed range for `ConcurrencyThreshold`. */
  public static readonly CONCURRENCY_THRESHOLD_RANGE: IntegerRange = { min: 1, max: 1024 };

  /** SageMaker prefix-aware routing (the construct's default). */
  public static prefixAware(options: PrefixAwareRoutingOptions = {}): RoutingStrategy {
    return new RoutingStrategy(
      RoutingStrategyKind.PREFIX_AWARE,
      options.prefixLength ?? RoutingStrategy.DEFAULT_PREFIX_LENGTH,
      options.concurrencyThreshold ?? RoutingStrategy.DEFAULT_CONCURRENCY_THRESHOLD,
    );
  }

  /** Route to the instance with the fewest outstanding requests. */
  public static leastOutstandingRequests(): RoutingStrategy {
    return new RoutingStrategy(RoutingStrategyKind.LEAST_OUTSTANDING_REQUESTS);
  }

  /** Route to a random instance. */
  public static random(): RoutingStrategy {
    return new RoutingStrategy(RoutingStrategyKind.RANDOM);
  }

  private constructor(
    /** Which SageMaker strategy. */
    public readonly kind: RoutingStrategyKind,
    /** Routing key length; set only for `PREFIX_AWARE`. */
    public readonly prefixLength?: number,
    /** Spill threshold; set only for `PREFIX_AWARE`. */
    public readonly concurrencyThreshold?: number,
  ) {}

  /** True for `PREFIX_AWARE`. */
  public get isPrefixAware(): boolean {
    return this.kind === RoutingStrategyKind.PREFIX_AWARE;
  }

  /** @internal */
  public _validate(problems: ProblemCollector): void {
    if (!this.isPrefixAware) return;
    const { PREFIX_LENGTH_RANGE: p, CONCURRENCY_THRESHOLD_RANGE: c } = RoutingStrategy;
    problems.integerInRange('routing.prefixLength', this.prefixLength, p.min, p.max);
    problems.integerInRange('routing.concurrencyThreshold', this.concurrencyThreshold, c.min, c.max);
  }

  /** @internal */
  public _render(): sagemaker.CfnEndpointConfig.RoutingConfigProperty {
    if (!this.isPrefixAware) return { routingStrategy: this.kind };
    return {
      routingStrategy: this.kind,
      prefixAwareRoutingConfig: {
        prefixLength: this.prefixLength,
        concurrencyThreshold: this.concurrencyThreshold,
      },
    };
  }
}
