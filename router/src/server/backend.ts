import { Pool } from 'undici';
import type { BackendTarget } from '../config';
import type { InstanceView, RoutingSnapshot } from '../policy';

export type HealthState = 'pending' | 'healthy' | 'ejected';

export interface BackendPoolOptions {
  readonly connections: number;
  readonly headersTimeoutMs: number;
  readonly bodyTimeoutMs: number;
}

/**
 * One backend: its connection pool, health state and counters. It is its own InstanceView, so building a
 * routing snapshot allocates nothing per instance.
 */
export class Backend implements InstanceView {
  readonly id: string;
  readonly origin: string;
  readonly basePath: string;
  readonly pool: Pool;
  /** 'pending' until the first passed health check; only 'healthy' backends are routable. */
  health: HealthState;
  inFlight = 0;
  /** Times a policy chose this backend (retries included). */
  decisions = 0;
  /** Requests that ended with a complete response from this backend (any status). */
  completed = 0;
  /** Requests that ended in a connection, timeout or stream failure on this backend. */
  failed = 0;
  consecutiveFailures = 0;
  consecutiveSuccesses = 0;

  constructor(target: BackendTarget, options: BackendPoolOptions, initialHealth: HealthState) {
    this.id = target.id;
    this.origin = target.origin;
    this.basePath = target.basePath;
    this.health = initialHealth;
    this.pool = new Pool(target.origin, {
      connections: options.connections,
      headersTimeout: options.headersTimeoutMs,
      bodyTimeout: options.bodyTimeoutMs,
      keepAliveTimeout: 4_000,
    });
  }

  get healthy(): boolean {
    return this.health === 'healthy';
  }
}

/** A counted in-flight request on a backend; release() is idempotent, so every exit path may call it. */
export class InFlightLease {
  private released = false;

  constructor(readonly backend: Backend) {
    backend.inFlight++;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.backend.inFlight--;
  }
}

/** A stand-in view used on retry: the instance that refused the connection, seen as unhealthy. */
class ExcludedView implements InstanceView {
  readonly healthy = false;
  constructor(
    readonly id: string,
    readonly inFlight: number,
  ) {}
}

export class BackendSet {
  private readonly byId: Map<string, Backend>;

  constructor(readonly list: readonly Backend[]) {
    this.byId = new Map(list.map((b) => [b.id, b]));
  }

  get(id: string): Backend | undefined {
    return this.byId.get(id);
  }

  healthyCount(): number {
    let n = 0;
    for (const b of this.list) if (b.healthy) n++;
    return n;
  }

  firstHealthy(): Backend | undefined {
    return this.list.find((b) => b.healthy);
  }

  /** Every backend in configuration order; `excludedId` (a backend that refused us) is shown unhealthy. */
  snapshot(nowMs: number, excludedId?: string): RoutingSnapshot {
    if (excludedId === undefined) return { instances: this.list, nowMs };
    return { instances: this.list.map((b) => (b.id === excludedId ? new ExcludedView(b.id, b.inFlight) : b)), nowMs };
  }
}
