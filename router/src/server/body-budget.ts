import { CHARS_PER_TOKEN } from '../state/block-hash';
import { totalmem } from 'node:os';
import { RouterError } from '../protocol';

/**
 * The bytes of request bodies the router holds at once, across requests: each body is read whole (its routing key
 * is in it) and kept until its answer ends, so without a shared bound many large bodies sent to a slow engine grow
 * the process until the kernel kills it (30 bodies of 16 MiB to a silent backend held 1.29 GB). Past the budget a
 * request is refused with 503 and Retry-After, which a client retries, instead of all of them failing together.
 * Bodies are charged as their bytes arrive, never from a declared Content-Length: a request that declares a large
 * body and sends nothing holds nothing (and the idle-body timeout cuts it).
 */
export class BodyBudget {
  private held = 0;

  constructor(readonly maxBytes: number) {}

  /** Bytes held now. */
  get bytes(): number {
    return this.held;
  }

  /**
   * Takes `bytes` from the budget, or throws 503 overloaded when they do not fit (nothing is taken then). The answer
   * says the router is busy, not its figures: a client has no use for them, and they size the attack.
   */
  take(bytes: number): void {
    if (this.held + bytes > this.maxBytes) {
      throw new RouterError('overloaded', 'the router is busy with other requests; retry shortly', {
        retryAfterSeconds: 1,
      });
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

/**
 * Request body bytes a prompt filling a `maxModelLen`-token context can take: 4 characters a token (the project's
 * token estimate, CHARS_PER_TOKEN) at 6 bytes each (the longest JSON form of a character, a `\uXXXX` escape, as
 * clients that escape non-ASCII text send it), plus 1 MiB for the rest of the request (other messages' framing,
 * tools, sampling fields). The default body limit when the backends state their context (docs/security.md); a body
 * above it cannot be a prompt the model could take, so it is refused before it is held. Images sent inline as
 * base64 can be larger: set limits.maxBodyBytes for them.
 */
export function bodyLimitForContext(maxModelLen: number): number {
  return Math.min(MAX_BODY_LIMIT_BYTES, maxModelLen * BODY_BYTES_PER_CONTEXT_TOKEN + BODY_LIMIT_HEADROOM_BYTES);
}

/** 4 characters a token × 6 bytes a character (see bodyLimitForContext). */
export const BODY_BYTES_PER_CONTEXT_TOKEN = CHARS_PER_TOKEN * 6;
/** What a request holds besides its prompt text (see bodyLimitForContext). */
export const BODY_LIMIT_HEADROOM_BYTES = 1024 * 1024;
/** The largest limits.maxBodyBytes the configuration allows. */
const MAX_BODY_LIMIT_BYTES = 1024 * 1024 * 1024;
