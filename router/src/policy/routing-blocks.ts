import type { RoutingRequest } from '../protocol/routing-request';
import { characterBlockHashes } from '../state/block-hash';
import { processStateHashKey, type RoutingBlockKey, type StateHashKey } from '../state/state-hash-key';
import { scopedSeed } from './cache-scope';
import { fmix32, hashString, hashUtf16Range } from './hashing';

const MODEL_SEED = 0x3c6ef372;
const TENANT_SEED = 0x1b873593;

/**
 * Chained keyed hashes of a request's full `blockChars`-character routing blocks (StateHashKey.blockKeys: 64-bit
 * HMAC-SHA256 tags under the deployment's secret), seeded by the model, the tenant key and the cache scope
 * (cache_salt, API key): block i's key covers every character up to the end of block i, so two prompts share it
 * only if they share that whole prefix (vLLM's prefix-cache rule, in characters). The cache-aware policy matches
 * these against its index, and an instance publishing what it was sent (state/instance-state-log.ts) hashes the
 * same way under the same secret, so a router observing that instance can match against its blocks too, and nobody
 * without the secret can.
 */
export function routingBlockHashes(
  request: RoutingRequest,
  blockChars: number,
  key: StateHashKey = processStateHashKey(),
): RoutingBlockKey[] {
  return key.blockKeys(routedText(request), blockChars, blockSeedOf(request));
}

/**
 * routingBlockHashes memoized for the last request: a policy hashes a request once for its decide and its commit.
 */
export function memoizedRoutingBlockHashes(
  blockChars: number,
  key: StateHashKey = processStateHashKey(),
): (request: RoutingRequest) => RoutingBlockKey[] {
  return lastRequestMemo((request) => routingBlockHashes(request, blockChars, key));
}

/**
 * The same blocks as routingBlockHashes (routed text, seed of model, tenant and cache scope), chained with the
 * engine model's fast unkeyed 53-bit hash (state/block-hash.ts characterBlockHashes) instead of a keyed MAC: two
 * requests share block i's hash exactly when they share its key (but for a 53-bit collision). Only for an index
 * that never leaves this process (aibrix-prefix-cache's table: nothing publishes it), where a MAC per 4-character
 * block cost most of a simulation. Memoized for the last request, like memoizedRoutingBlockHashes.
 */
export function memoizedUnkeyedRoutingBlockHashes(blockChars: number): (request: RoutingRequest) => Float64Array {
  return lastRequestMemo((request) => characterBlockHashes(routedText(request), blockChars, blockSeedOf(request)));
}

/** `hashesOf` memoized for the last request it was called with. */
function lastRequestMemo<T>(hashesOf: (request: RoutingRequest) => T): (request: RoutingRequest) => T {
  let lastRequest: RoutingRequest | undefined;
  let lastHashes: T | undefined;
  return (request) => {
    if (request !== lastRequest || lastHashes === undefined) {
      lastHashes = hashesOf(request);
      lastRequest = request;
    }
    return lastHashes;
  };
}

/** The seed text a request's chain starts from: model, tenant key and cache scope, each length-prefixed (unambiguous). */
function blockSeedOf(request: RoutingRequest): string {
  const part = (value: string | undefined) => (value === undefined ? '-;' : `${value.length}:${value};`);
  return part(request.model) + part(request.tenantKey) + part(request.cacheScope);
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

/**
 * The key a prompt no instance holds is placed by (rendezvous order): a fast unkeyed 32-bit hash of its first
 * routing block in its model, tenant and cache scope, or shortPromptKey when it has no full block. Unkeyed on
 * purpose: it is never published, and router replicas agree on where a cold prompt goes without sharing the
 * state-hash secret.
 */
export function coldPlacementKey(request: RoutingRequest, blockChars: number): number {
  const text = routedText(request);
  if (text.length < blockChars) return shortPromptKey(request, blockChars);
  const seed = scopedSeed(
    fmix32(
      hashString(request.model, MODEL_SEED) ^ (request.tenantKey ? hashString(request.tenantKey, TENANT_SEED) : 0),
    ),
    request,
  );
  return hashUtf16Range(text, 0, blockChars, seed) | 0;
}

function latin1(body: Uint8Array | undefined): string {
  if (body === undefined || body.length === 0) return '';
  return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('latin1');
}
