import type { ParsedRequest } from '../protocol';

/**
 * Tenant isolation in the engines' own prefix cache. vLLM shares cached blocks only among requests with the same
 * `cache_salt` (it is mixed into the hash of a prompt's first block), and reports what it reused in
 * `usage.prompt_tokens_details.cached_tokens`: without a salt, a client with one key can time or read another key's
 * cached prompt on a shared engine. So, with API keys, the router salts every OpenAI body it forwards with the
 * verified key's identity, unless the body carries its own `cache_salt` (the client then chose its scope) or the
 * deployment shares the engines' cache across keys (--shared-engine-cache on). Bodies forwarded to a backend's own
 * `/invocations` are left as sent: their schema is the model container's, not vLLM's.
 */
export function engineCacheSaltOf(
  parsed: ParsedRequest,
  keyIdentity: string | undefined,
  sharedEngineCache: boolean,
): string | undefined {
  if (keyIdentity === undefined || sharedEngineCache || !parsed.jsonBody || parsed.ownCacheSalt === true)
    return undefined;
  return `${ENGINE_SALT_PREFIX}${keyIdentity}`;
}

/** Names the salt's origin in the engine's requests (a salt a client chose never starts like this by accident). */
const ENGINE_SALT_PREFIX = 'prefix-router-key:';

/**
 * `body` (a JSON object, as parsing established) with `"cache_salt": salt` as its last member: spliced in before the
 * closing brace rather than re-serialized, so the rest of the bytes go to the engine exactly as the client sent them.
 * Last, because JSON parsers keep the last of duplicate names: a body's own `"cache_salt": null` (no salt, as vLLM
 * reads it) cannot undo the router's.
 */
export function withCacheSalt(body: Buffer, salt: string): Buffer {
  return withJsonMember(body, 'cache_salt', salt);
}

/** `body` (a JSON object) with `"name": value` spliced in as its last member, as withCacheSalt (also the priority). */
export function withJsonMember(body: Buffer, name: string, value: string | number): Buffer {
  const close = body.lastIndexOf(0x7d);
  if (close < 0) throw new Error('withJsonMember takes a JSON object body');
  let previous = close - 1;
  while (previous >= 0 && isJsonWhitespace(body[previous])) previous--;
  const member = `${body[previous] === 0x7b ? '' : ','}${JSON.stringify(name)}:${JSON.stringify(value)}`;
  return Buffer.concat([body.subarray(0, close), Buffer.from(member, 'utf8'), body.subarray(close)]);
}

function isJsonWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;
}
