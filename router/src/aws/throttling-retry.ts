/**
 * Retries of control-plane and CloudWatch calls that AWS throttled. The SDK already retries a few times with
 * its own backoff; an A/B run makes calls for hours (polling, restores), so a throttled poll must not end it.
 * Exponential backoff with full jitter (AWS Architecture Blog, "Exponential Backoff and Jitter"): the delay
 * before attempt k is uniform in [0, min(maxDelay, base × 2^k)], which spreads retries of several clients.
 * Time and randomness are injected so tests run the backoff in milliseconds.
 */
export interface Clock {
  /** Wall time in milliseconds (Date.now in production). */
  now(): number;
  /** Resolves after `ms`; rejects with the signal's reason when `signal` aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Uniform in [0, 1). */
  random(): number;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = (): void => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
  random: () => Math.random(),
};

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

/** 8 attempts, 1 s base, 60 s cap: up to ~4 minutes of backoff before giving up. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 8, baseDelayMs: 1000, maxDelayMs: 60_000 };

/** `SlowDown` is S3's (HTTP 503): the trace importer reads Data Capture objects through the same retry. */
const THROTTLING_NAMES = new Set(['ThrottlingException', 'Throttling', 'TooManyRequestsException', 'RequestLimitExceeded', 'ThrottledException', 'SlowDown']);

export function isThrottling(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: string; $retryable?: { throttling?: boolean }; $metadata?: { httpStatusCode?: number } };
  return (e.name !== undefined && THROTTLING_NAMES.has(e.name)) || e.$retryable?.throttling === true || e.$metadata?.httpStatusCode === 429;
}

export class ThrottlingExhaustedError extends Error {
  constructor(readonly what: string, readonly attempts: number, cause: unknown) {
    super(`${what} was throttled ${attempts} times in a row; giving up (raise the account's API rate limits or run fewer clients at once)`, { cause });
    this.name = 'ThrottlingExhaustedError';
  }
}

/** Calls `call`; on throttling waits (full jitter) and tries again, up to policy.maxAttempts. Other errors pass through. */
export async function withThrottlingRetry<T>(
  what: string,
  call: () => Promise<T>,
  clock: Clock,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  onRetry?: (attempt: number, delayMs: number) => void,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (!isThrottling(err)) throw err;
      if (attempt >= policy.maxAttempts) throw new ThrottlingExhaustedError(what, attempt, err);
      const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
      const delay = Math.floor(clock.random() * cap);
      onRetry?.(attempt, delay);
      await clock.sleep(delay);
    }
  }
}
