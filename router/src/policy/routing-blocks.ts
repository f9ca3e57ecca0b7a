import type { RoutingRequest } from '../protocol/routing-request';
import { scopedSeed } from './cache-scope';
import { fmix32, hashString, hashUtf16Range } from './hashing';

const MODEL_SEED = 0x3c6ef372;
const TENANT_SEED = 0x1b873593;

/**
 * Chained hashes of a request's full `blockChars`-character routing blocks, seeded by the model, the tenant
 * key and the cache scope (cache_salt, API key): block i's hash covers every character up to the end of block i, so two prompts share it only if they share
 * that whole prefix (vLLM's prefix-cache rule, in characters). The cache-aware policy matches these against its
 * index, and an instance publishing what it was sent (state/instance-state-log.ts) hashes the same way, so a
 * router observing that instance can match against its blocks too.
 */
export function routingBlockHashes(request: RoutingRequest, blockChars: number): Int32Array {
  const text = routedText(request);
  const count = Math.floor(text.length / blockChars);
  const hashes = new Int32Array(count);
  let seed = scopedSeed(fmix32(hashString(request.model, MODEL_SEED) ^ (request.tenantKey ? hashString(request.tenantKey, TENANT_SEED) : 0)), request);
  for (let i = 0; i < count; i++) {
    seed = hashUtf16Range(text, i * blockChars, (i + 1) * blockChars, seed);
    hashes[i] = seed | 0;
  }
  return hashes;
}

/**
 * The text a request's routing blocks cover: its routing text, or for an opaque /invocations body (no routing
 * text) the body's bytes as Latin-1 (one character per byte). The trace importer hashes the same text.
 */
export function routedText(request: RoutingRequest): string {
  return request.routingText.length > 0 ? request.routingText : latin1(request.rawBody);
}

/** The key a prompt too short for one full block is placed by: the hash of what it has, in its cache scope. */
export function shortPromptKey(request: RoutingRequest, blockChars: number): number {
  return fmix32(hashString(request.routingText.slice(0, blockChars), scopedSeed(MODEL_SEED, request)));
}

function latin1(body: Uint8Array | undefined): string {
  if (body === undefined || body.length === 0) return '';
  return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('latin1');
}
