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
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- an abort rejects with the signal's own reason, as node:timers/promises does
        reject(signal.reason);
        return;
      }
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = (): void => {
        clearTimeout(timer);
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- an abort rejects with the signal's own reason, as node:timers/promises does
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
const THROTTLING_NAMES = new Set([
  'ThrottlingException',
  'Throttling',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'ThrottledException',
  'SlowDown',
]);

export function isThrottling(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: string; $retryable?: { throttling?: boolean }; $metadata?: { httpStatusCode?: number } };
  return (
    (e.name !== undefined && THROTTLING_NAMES.has(e.name)) ||
    e.$retryable?.throttling === true ||
    e.$metadata?.httpStatusCode === 429
  );
}

export class ThrottlingExhaustedError extends Error {
  constructor(
    readonly what: string,
    readonly attempts: number,
    cause: unknown,
  ) {
    super(
      `${what} was throttled ${attempts} times in a row; giving up (raise the account's API rate limits or run fewer clients at once)`,
      { cause },
    );
    this.name = 'ThrottlingExhaustedError';
  }
}

/** Full-jitter delay before retry number `attempt` (1-based): uniform in [0, min(maxDelay, base × 2^(attempt-1))). */
export function backoffDelayMs(attempt: number, clock: Clock, policy: RetryPolicy): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(attempt - 1, 30));
  return Math.floor(clock.random() * cap);
}

/**
 * Calls `call`; on throttling waits (full jitter) and tries again, up to policy.maxAttempts. Other errors pass
 * through. The backoff sleep ends early (rejecting with the signal's reason) when `signal` aborts.
 */
export async function withThrottlingRetry<T>(
  what: string,
  call: () => Promise<T>,
  clock: Clock,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  onRetry?: (attempt: number, delayMs: number) => void,
  signal?: AbortSignal,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (!isThrottling(err)) throw err;
      if (attempt >= policy.maxAttempts) throw new ThrottlingExhaustedError(what, attempt, err);
      const delay = backoffDelayMs(attempt, clock, policy);
      onRetry?.(attempt, delay);
      await clock.sleep(delay, signal);
    }
  }
}

/**
 * What a failed control-plane call means for the caller (SageMaker API reference, CommonErrors and each
 * operation's Errors section):
 * - `throttling`: ThrottlingException and kin; try again later.
 * - `transient`: the network (socket reset, timeout, refused connection), a 5xx that outlasted the SDK's own
 *   retries, ResourceLimitExceeded (capacity or quota that frees up when another deployment ends); try again.
 * - `in-progress`: ValidationException "Cannot update in-progress endpoint" (or maintenance): UpdateEndpoint is
 *   refused while an update runs; wait for the endpoint to settle, then try again.
 * - `credentials`: expired session credentials; re-resolve the credential chain, then try again.
 * - `permanent`: anything else (a bad request, access denied, a resource that does not exist).
 */
export type ControlPlaneErrorKind = 'throttling' | 'transient' | 'in-progress' | 'credentials' | 'permanent';

const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);
const TRANSIENT_NAMES = new Set([
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'InternalFailure',
  'InternalServerError',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'ResourceLimitExceeded',
]);
const CREDENTIAL_NAMES = new Set([
  'ExpiredTokenException',
  'ExpiredToken',
  'RequestExpired',
  'TokenRefreshRequired',
  'CredentialsProviderError',
]);

export function classifyControlPlaneError(err: unknown): ControlPlaneErrorKind {
  if (isThrottling(err)) return 'throttling';
  if (typeof err !== 'object' || err === null) return 'permanent';
  const e = err as {
    name?: string;
    code?: string;
    message?: string;
    $fault?: string;
    $metadata?: { httpStatusCode?: number };
  };
  const name = e.name ?? '';
  const message = e.message ?? '';
  if (CREDENTIAL_NAMES.has(name) || /security token included in the request is expired/i.test(message))
    return 'credentials';
  if (
    (name === 'ValidationException' || name === 'ValidationError') &&
    /in-progress endpoint|in progress|undergoing (system )?maintenance|SystemUpdating/i.test(message)
  )
    return 'in-progress';
  if (
    TRANSIENT_NAMES.has(name) ||
    (e.code !== undefined && NETWORK_CODES.has(e.code)) ||
    /socket hang up|ECONNRESET/i.test(message)
  )
    return 'transient';
  const status = e.$metadata?.httpStatusCode;
  if ((status !== undefined && status >= 500) || e.$fault === 'server') return 'transient';
  return 'permanent';
}
