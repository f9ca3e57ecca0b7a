import { RouterError } from '../protocol';

interface Waiter {
  readonly grant: () => void;
  timer: NodeJS.Timeout | undefined;
}

/**
 * The routed requests one backend's connection pool can carry at once (maxConnectionsPerBackend), with a bounded
 * wait for a free one (limits.poolWaitTimeoutMs): undici queues a request for a busy pool without limit, so a
 * backend whose connections are all held (slow answers, a burst) would make every further request wait its whole
 * upstream headers timeout. Waiters are served first come, first served; one that waits too long is answered
 * `503 overloaded` with `Retry-After: 1`. The observer's long poll and the health checks use the same pool
 * unaccounted (one or two connections), so a full pool can still queue a request that long at most.
 */
export class ConnectionSlots {
  private inUse = 0;
  private readonly waiters: Waiter[] = [];

  constructor(readonly size: number) {}

  /** Requests holding a slot now. */
  get busy(): number {
    return this.inUse;
  }

  /**
   * A slot, at once when one is free, else when one frees within `timeoutMs` (0: no bound). Resolves to its
   * release (idempotent); rejects with RouterError 'overloaded' when none freed in time.
   */
  acquire(timeoutMs: number): Promise<() => void> {
    if (this.inUse < this.size && this.waiters.length === 0) {
      this.inUse++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          if (waiter.timer !== undefined) clearTimeout(waiter.timer);
          this.inUse++;
          resolve(this.releaser());
        },
        timer: undefined,
      };
      if (timeoutMs > 0) {
        waiter.timer = setTimeout(() => {
          const at = this.waiters.indexOf(waiter);
          if (at >= 0) this.waiters.splice(at, 1);
          reject(
            new RouterError(
              'overloaded',
              // Neither the instance nor the pool's figures: clients learn that it is busy, not how the fleet is built.
              'the model instance chosen for this request is busy (no free connection in time); retry shortly',
              { retryAfterSeconds: 1 },
            ),
          );
        }, timeoutMs);
        waiter.timer.unref();
      }
      this.waiters.push(waiter);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inUse--;
      const next = this.waiters.shift();
      next?.grant();
    };
  }
}
