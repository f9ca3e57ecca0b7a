/**
 * The response headers prefix-router adds to answers (with --routing-headers), read back by the live benchmark
 * on both transports: one set of names for the server that writes them and the clients that read them.
 */
/** The backend instance that served the request (an opaque name). */
export const INSTANCE_HEADER = 'x-prefix-router-instance';
/** Why the policy chose that instance (e.g. `prefix-hit`, `least-loaded`). */
export const DECISION_HEADER = 'x-prefix-router-decision';
/** Microseconds the policy took to decide and commit: lets a benchmark client report routing cost per request. */
export const DECISION_TIME_HEADER = 'x-prefix-router-decision-us';
/** Prompt tokens the policy predicted cached on the chosen instance (only from policies that predict). */
export const PREDICTED_CACHED_HEADER = 'x-prefix-router-predicted-cached-tokens';
/**
 * SageMaker passes Custom Attributes to the container and back as they are (the DLC's route middleware reads
 * `route=/path` in it); it strips every other container header, so a container names its instance there.
 */
export const CUSTOM_ATTRIBUTES_HEADER = 'x-amzn-sagemaker-custom-attributes';
