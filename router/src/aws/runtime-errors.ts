/**
 * Typed errors of the runtime client. Each one says what happened and what to do about it, so an application
 * can branch on the class (retry later, fix the request, read the container's log) instead of parsing the
 * SDK's exception names.
 */
export type LlmErrorKind =
  | 'throttled'
  | 'model'
  | 'validation'
  | 'unavailable'
  | 'credentials'
  | 'access-denied'
  | 'aborted'
  | 'stream'
  | 'unknown';

export class LlmEndpointError extends Error {
  constructor(
    readonly kind: LlmErrorKind,
    message: string,
    /** What the caller can do about it. */
    readonly advice: string,
    /** HTTP status SageMaker answered, when one arrived. */
    readonly statusCode: number | undefined,
    /** The SDK's exception name (e.g. `ModelError`, `ThrottlingException`). */
    readonly awsErrorName: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(`${message} — ${advice}`, options);
    this.name = 'LlmEndpointError';
  }
}

/** The endpoint (or the account's quota) refused the rate: the SDK retried and gave up. */
export class LlmThrottledError extends LlmEndpointError {
  constructor(message: string, statusCode: number | undefined, awsErrorName: string | undefined, cause: unknown) {
    super(
      'throttled',
      message,
      'slow down, raise maxAttempts, or ask for a higher invocation quota',
      statusCode,
      awsErrorName,
      { cause },
    );
    this.name = 'LlmThrottledError';
  }
}

/** The container answered an error (vLLM rejected the request, ran out of memory, crashed…). */
export class LlmModelError extends LlmEndpointError {
  constructor(
    message: string,
    /** Status the container answered (e.g. 400 for a prompt longer than max_model_len). */
    readonly originalStatusCode: number | undefined,
    /** The container's own message. */
    readonly originalMessage: string | undefined,
    /** CloudWatch log stream of the instance, when SageMaker names it. */
    readonly logStreamArn: string | undefined,
    statusCode: number | undefined,
    awsErrorName: string | undefined,
    cause: unknown,
  ) {
    super(
      'model',
      message,
      logStreamArn
        ? `read the container log ${logStreamArn}`
        : 'read the container log in /aws/sagemaker/Endpoints/<endpoint-name>',
      statusCode,
      awsErrorName,
      { cause },
    );
    this.name = 'LlmModelError';
  }
}

/** SageMaker rejected the request before the container saw it: bad body, bad PrefixAwareId, unknown endpoint or variant. */
export class LlmValidationError extends LlmEndpointError {
  constructor(message: string, statusCode: number | undefined, awsErrorName: string | undefined, cause: unknown) {
    super(
      'validation',
      message,
      'fix the request (endpoint name, variant, body, PrefixAwareId of 1–64 printable ASCII characters)',
      statusCode,
      awsErrorName,
      { cause },
    );
    this.name = 'LlmValidationError';
  }
}

/** No instance could take the request (endpoint updating, instances unhealthy, internal failure). */
export class LlmUnavailableError extends LlmEndpointError {
  constructor(message: string, statusCode: number | undefined, awsErrorName: string | undefined, cause: unknown) {
    super(
      'unavailable',
      message,
      'retry later; check the endpoint is InService and its instances healthy',
      statusCode,
      awsErrorName,
      { cause },
    );
    this.name = 'LlmUnavailableError';
  }
}

/** The stream broke after it started (ModelStreamError, InternalStreamFailure, a cut connection). */
export class LlmStreamError extends LlmEndpointError {
  constructor(
    message: string,
    readonly errorCode: string | undefined,
    awsErrorName: string | undefined,
    cause: unknown,
  ) {
    super('stream', message, 'retry the request; the text received so far is incomplete', undefined, awsErrorName, {
      cause,
    });
    this.name = 'LlmStreamError';
  }
}

const THROTTLING = new Set(['ThrottlingException', 'TooManyRequestsException', 'Throttling', 'RequestLimitExceeded']);
const UNAVAILABLE = new Set([
  'ServiceUnavailable',
  'ModelNotReadyException',
  'InternalFailure',
  'InternalDependencyException',
]);
const STREAM = new Set(['ModelStreamError', 'InternalStreamFailure']);
const CREDENTIALS = new Set([
  'CredentialsProviderError',
  'UnrecognizedClientException',
  'InvalidSignatureException',
  'ExpiredTokenException',
  'IncompleteSignature',
]);

interface SdkErrorShape {
  name?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  OriginalStatusCode?: number;
  OriginalMessage?: string;
  LogStreamArn?: string;
  ErrorCode?: string;
}

/** Maps anything the SDK (or the abort signal) raised to a typed LlmEndpointError. */
export function toLlmError(err: unknown, endpointName: string): LlmEndpointError {
  if (err instanceof LlmEndpointError) return err;
  const e = (typeof err === 'object' && err !== null ? err : {}) as SdkErrorShape;
  const name = e.name;
  const status = e.$metadata?.httpStatusCode;
  const message = (e.message ?? String(err)).slice(0, 500);
  if (name === 'AbortError') {
    return new LlmEndpointError(
      'aborted',
      `request to ${endpointName} was aborted`,
      'nothing to do: the caller cancelled it',
      status,
      name,
      { cause: err },
    );
  }
  // Names first: ModelNotReadyException also answers 429 but means "not loaded yet", not "too fast".
  if (name !== undefined && UNAVAILABLE.has(name))
    return new LlmUnavailableError(`${endpointName} could not serve the request: ${message}`, status, name, err);
  if ((name !== undefined && THROTTLING.has(name)) || status === 429)
    return new LlmThrottledError(`${endpointName} throttled the request: ${message}`, status, name, err);
  if (name === 'ModelError') {
    return new LlmModelError(
      `the model container of ${endpointName} answered ${e.OriginalStatusCode ?? 'an error'}: ${e.OriginalMessage ?? message}`,
      e.OriginalStatusCode,
      e.OriginalMessage,
      e.LogStreamArn,
      status,
      name,
      err,
    );
  }
  if (name === 'ValidationError' || name === 'ValidationException')
    return new LlmValidationError(`${endpointName} rejected the request: ${message}`, status, name, err);
  if (name !== undefined && STREAM.has(name))
    return new LlmStreamError(`the response stream of ${endpointName} failed: ${message}`, e.ErrorCode, name, err);
  if (name !== undefined && CREDENTIALS.has(name)) {
    return new LlmEndpointError(
      'credentials',
      `no valid AWS credentials for ${endpointName}: ${message}`,
      'configure credentials (AWS_PROFILE, environment, SSO or an instance role)',
      status,
      name,
      { cause: err },
    );
  }
  if (name === 'AccessDeniedException' || status === 403) {
    return new LlmEndpointError(
      'access-denied',
      `not allowed to invoke ${endpointName}: ${message}`,
      'grant sagemaker:InvokeEndpoint on the endpoint (PrefixAwareLlmEndpoint.grantInvoke); it also authorizes InvokeEndpointWithResponseStream',
      status,
      name,
      { cause: err },
    );
  }
  return new LlmEndpointError(
    'unknown',
    `invoking ${endpointName} failed: ${message}`,
    'retry; if it persists, check the endpoint and network',
    status,
    name,
    { cause: err },
  );
}
