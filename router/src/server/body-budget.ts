import { totalmem } from 'node:os';
import { RouterError } from '../protocol';

/**
 * The bytes of request bodies the router holds at once, across requests: each body is read whole (its routing key
 * is in it) and kept until its answer ends, so without a shared bound many large bodies sent to a slow engine grow
 * the process until the kernel kills it (30 bodies of 16 MiB to a silent backend held 1.29 GB). Past the budget a
 * request is refused with 503 and Retry-After, which a client retries, instead of all of them failing together.
 */
export class BodyBudget {
  private held = 0;

  constructor(readonly maxBytes: number) {}

  /** Bytes held now. */
  get bytes(): number {
    return this.held;
  }

  /** Takes `bytes` from the budget, or throws 503 overloaded when they do not fit (nothing is taken then). */
  take(bytes: number): void {
    if (this.held + bytes > this.maxBytes) {
      throw new RouterError('overloaded', `the router holds ${this.held} bytes of request bodies, and ${bytes} more would pass its ${this.maxBytes}-byte budget`, { retryAfterSeconds: 1 });
    }
    this.held += bytes;
  }

  give(bytes: number): void {
    this.held = Math.max(0, this.held - bytes);
  }
}

/**
 * The default budget: a quarter of the memory this process may use (its cgroup limit in a container, else the
 * machine's), so bodies alone cannot exhaust it while the rest (Node, answers being streamed, the routing index)
 * has room; never less than one largest body.
 */
export function defaultBodyBudgetBytes(maxBodyBytes: number): number {
  const constrained = typeof process.constrainedMemory === 'function' ? process.constrainedMemory() : 0;
  // A cgroup without a limit reports a huge value (or 0 on some versions): then the machine's memory is the bound.
  const available = constrained !== undefined && constrained > 0 && constrained < totalmem() ? constrained : totalmem();
  return Math.max(maxBodyBytes, Math.floor(available / 4));
}
