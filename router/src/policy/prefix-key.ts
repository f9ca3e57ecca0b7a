import type { RoutingRequest } from '../protocol/routing-request';
import { scopedSeed } from './cache-scope';
import { fmix32, hashBytes, hashString, hashTextPrefix } from './hashing';

// Seeds of the key's hash: one per key basis (a text key and a body key of the same characters differ) and one
// for the tenant key.
const TEXT_SEED = 0x5f3759df;
const BYTES_SEED = 0x2545f491;
const TENANT_SEED = 0x27d4eb2f;

const encoder = new TextEncoder();
let scratch = new Uint8Array(0);

function seedFor(base: number, request: RoutingRequest): number {
  const tenantKey = request.tenantKey;
  const seed =
    tenantKey === undefined || tenantKey.length === 0 ? base : fmix32(base ^ hashString(tenantKey, TENANT_SEED));
  return scopedSeed(seed, request);
}

/**
 * SageMaker PREFIX_AWARE's routing key: a hash of the first `prefixLength` units of the request, with the
 * tenant key (X-Amzn-SageMaker-Prefix-Aware-Id / prompt_cache_key) and the cache scope (cache_salt, API key) mixed in.
 * - keyBasis 'message-text' (OpenAI-compatible path): the first prefixLength *characters* (Unicode code
 *   points) of the routing text;
 * - keyBasis 'body-bytes' (InvokeEndpoint, InvokeEndpointWithResponseStream, /invocations): the first
 *   prefixLength *bytes* of the raw body. A request built without `rawBody` (e.g. by a workload generator)
 *   uses the UTF-8 encoding of its routing text in place of the body.
 * Two requests with equal prefixes and equal tenant keys always get the same key; nothing past the prefix
 * matters.
 */
export function prefixKey(request: RoutingRequest, prefixLength: number): number {
  if (request.keyBasis === 'message-text') {
    return hashTextPrefix(request.routingText, prefixLength, seedFor(TEXT_SEED, request));
  }
  const seed = seedFor(BYTES_SEED, request);
  if (request.rawBody !== undefined) return hashBytes(request.rawBody, prefixLength, seed);
  return hashBytes(utf8Prefix(request.routingText, prefixLength), prefixLength, seed);
}

/**
 * The first `maxBytes` bytes of the UTF-8 encoding of `text`, written into a reused scratch buffer. The
 * buffer has 3 spare bytes so a character straddling the limit is still written whole (encodeInto never
 * writes partial characters) and the caller can cut at exactly `maxBytes`.
 */
function utf8Prefix(text: string, maxBytes: number): Uint8Array {
  if (scratch.length < maxBytes + 3) scratch = new Uint8Array(maxBytes + 3);
  // Each UTF-16 code unit encodes to at least one byte, so maxBytes code units always cover maxBytes bytes.
  const source = text.length > maxBytes ? text.slice(0, maxBytes) : text;
  const { written } = encoder.encodeInto(source, scratch);
  return scratch.subarray(0, Math.min(written, maxBytes));
}
