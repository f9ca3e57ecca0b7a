import { RouterError } from './router-errors';

/** SageMaker's header that scopes prefix keys to a tenant (the SDK's `PrefixAwareId` field). */
export const PREFIX_AWARE_ID_HEADER = 'x-amzn-sagemaker-prefix-aware-id';

const MAX_PREFIX_AWARE_ID = 64;

/**
 * The tenant key mixed into the routing key: the X-Amzn-SageMaker-Prefix-Aware-Id header when present
 * (1 to 64 printable ASCII characters, else 400), otherwise the body's `prompt_cache_key`.
 * The header value is never echoed back: it may be an identifier the caller keeps private.
 */
export function tenantKeyOf(
  headerValue: string | string[] | undefined,
  promptCacheKey: string | undefined,
): string | undefined {
  if (headerValue === undefined) return promptCacheKey;
  const value = Array.isArray(headerValue) ? headerValue.join(',') : headerValue;
  if (!isValidPrefixAwareId(value)) {
    throw new RouterError(
      'invalid_prefix_aware_id',
      `X-Amzn-SageMaker-Prefix-Aware-Id must be 1 to ${MAX_PREFIX_AWARE_ID} printable ASCII characters (got ${value.length} characters)`,
    );
  }
  return value;
}

export function isValidPrefixAwareId(value: string): boolean {
  if (value.length < 1 || value.length > MAX_PREFIX_AWARE_ID) return false;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

/**
 * The cache scope of a request (RoutingRequest.cacheScope): vLLM's `cache_salt` and, when the router requires API
 * keys, the identity of the key it was authenticated by (KeyRing.identity: a digest, never the key). Undefined when
 * it has neither, so unscoped requests hash as before. The identity is hex, so the separator cannot be forged by a
 * salt: no (identity, salt) pair encodes like another.
 */
export function cacheScopeOf(cacheSalt: string | undefined, keyIdentity: string | undefined): string | undefined {
  if (cacheSalt === undefined && keyIdentity === undefined) return undefined;
  return `${keyIdentity ?? ''}|${cacheSalt ?? ''}`;
}
