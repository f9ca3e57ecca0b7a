/**
 * Package export `cdk-prefix-aware-llm-router/client` (also the package's main entry): the typed SageMaker runtime client for endpoints created by
 * PrefixAwareLlmEndpoint (InvokeEndpoint and InvokeEndpointWithResponseStream with OpenAI chat bodies,
 * PrefixAwareId / SessionId / TargetVariant, typed errors). Depends on @aws-sdk/client-sagemaker-runtime only.
 */
export {
  PrefixAwareLlmClient,
  createRuntimeClient,
  DEFAULT_MAX_SOCKETS,
  type PrefixAwareLlmClientOptions,
  type CallOptions,
  type ChatAnswer,
  type ChatCompletionBody,
  type ChatMessageInput,
  type ChatStream,
  type ChatStreamEvent,
  type ChatUsage,
} from './runtime-client';
export {
  LlmEndpointError,
  LlmModelError,
  LlmStreamError,
  LlmThrottledError,
  LlmUnavailableError,
  LlmValidationError,
  toLlmError,
  type LlmErrorKind,
} from './runtime-errors';
