import type { RoutingRequest } from '../protocol/routing-request';
import { fmix32, hashString } from './hashing';

const SCOPE_SEED = 0x68e31da4;

/**
 * A routing hash seed with the request's cache scope (RoutingRequest.cacheScope: vLLM's `cache_salt` and the
 * authenticated key's identity) mixed in, so two scopes never hash one prompt alike: their prompts never appear to
 * share a prefix in an index, a published state or a prefix key, as vLLM's own cache never shares blocks across
 * salts (vLLM mixes `cache_salt` into the hash of a prompt's first block, so every block of a salted prompt is
 * apart: https://docs.vllm.ai/en/latest/design/prefix_caching/). Without a scope the seed is unchanged, so unscoped
 * requests hash exactly as before scopes existed.
 */
export function scopedSeed(seed: number, request: RoutingRequest): number {
  const scope = request.cacheScope;
  return scope === undefined ? seed : fmix32(seed ^ hashString(scope, SCOPE_SEED));
}
