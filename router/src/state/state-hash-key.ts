import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { readStateHashSecret } from '../common/api-keys';

/**
 * A routing block's key in the routing index and the published instance state: the first 64 bits of a keyed MAC
 * of the block's whole prefix (StateHashKey.blockKeys), as 8 Latin-1 characters, one per byte. A string so it is
 * a Map key as it is (a 64-bit value has no exact JavaScript number) and travels as its 8 bytes.
 */
export type RoutingBlockKey = string;

/** Bytes per routing block key on the wire: 64 bits (NIST SP 800-107 Rev. 1 §5.3.4: a MAC tag of ≥ 64 bits). */
export const ROUTING_BLOCK_KEY_BYTES = 8;

/** Where a router's StateHashKey came from: its key file, or drawn at random when it has none. */
export type StateHashKeySource = 'file' | 'process';

// Domain separation: the first block's MAC covers the request's seed, later ones the previous block's tag, and the
// key's public id is a MAC of a constant none of them can be.
const FIRST_BLOCK = Buffer.from([0]);
const NEXT_BLOCK = Buffer.from([1]);
const KEY_ID_LABEL = 'prefix-router/state-hash-key-id/v1';

/**
 * The per-deployment secret that keys the router's routing block hashes (`--state-hash-key-file`): every block's
 * key is HMAC-SHA256 (RFC 2104) under this secret, chained, truncated to 64 bits. Whoever reads a published
 * instance state without the secret cannot test a guessed prompt against it (the block hashes were an offline
 * oracle while they were an unkeyed public function), and with 64 bits no two prefixes share a key by chance.
 *
 * Every router that reads another's published state (observing replicas, the sidecars they observe) must hold the
 * same secret; `id`, a MAC of a constant, tells them apart without revealing it. A router with no key file draws a
 * random secret per process (`source: 'process'`): its published state is then useful to nobody else, which the
 * observers say (StateHashKeyMismatchError) instead of mis-routing on blocks that never match.
 */
export class StateHashKey {
  /** Public fingerprint of the secret: 16 hex digits, equal for equal secrets. */
  readonly id: string;
  private readonly secret: KeyObject;

  private constructor(
    secret: Buffer,
    readonly source: StateHashKeySource,
  ) {
    this.secret = createSecretKey(secret);
    this.id = createHmac('sha256', this.secret).update(KEY_ID_LABEL).digest('hex').slice(0, 16);
  }

  /** The key a key file holds (readStateHashSecret: its first key line, at least 32 characters). Read once: see docs/security.md on rotation. */
  static fromFile(path: string): StateHashKey {
    return new StateHashKey(Buffer.from(readStateHashSecret(path), 'utf8'), 'file');
  }

  /** A key from a known secret: a deterministic run (the simulator, benchmarks, tests). */
  static fromSecret(secret: string): StateHashKey {
    return new StateHashKey(Buffer.from(secret, 'utf8'), 'file');
  }

  /** A fresh random key: what a router without a key file uses (never written anywhere). */
  static random(): StateHashKey {
    return new StateHashKey(randomBytes(32), 'process');
  }

  /**
   * Chained keyed hashes of every full `blockChars`-character block of `text`: block i's key is
   * HMAC(secret, 0x00 ‖ seed ‖ block 0) for i = 0, HMAC(secret, 0x01 ‖ key i−1 ‖ block i) after, each truncated to
   * 64 bits, with blocks as UTF-16LE code units. So block i's key depends on the seed and every character up to the
   * end of block i (vLLM's prefix-cache rule), and two prompts share it only if they share that whole prefix.
   * `seed` scopes the chain (model, tenant, cache scope: routing-blocks.ts) and is read unambiguously (length
   * prefixed by the caller).
   */
  blockKeys(text: string, blockChars: number, seed: string): RoutingBlockKey[] {
    const count = Math.floor(text.length / blockChars);
    const keys = new Array<RoutingBlockKey>(count);
    let previous = '';
    for (let i = 0; i < count; i++) {
      const mac = createHmac('sha256', this.secret);
      if (i === 0) mac.update(FIRST_BLOCK).update(seed, 'utf8');
      else mac.update(NEXT_BLOCK).update(previous, 'latin1');
      mac.update(text.slice(i * blockChars, (i + 1) * blockChars), 'utf16le');
      previous = mac.digest().toString('latin1', 0, ROUTING_BLOCK_KEY_BYTES);
      keys[i] = previous;
    }
    return keys;
  }
}

/** A router's key: the file's when one is configured, else a random one for this process. */
export function stateHashKeyOf(file: string | undefined): StateHashKey {
  return file === undefined ? StateHashKey.random() : StateHashKey.fromFile(file);
}

/** One random key per process: what a policy built without an explicit key hashes with. */
let processKey: StateHashKey | undefined;
export function processStateHashKey(): StateHashKey {
  processKey ??= StateHashKey.random();
  return processKey;
}

/** The bytes of a list of block keys, 8 each, in order (the wire form). */
export function routingBlockKeyBytes(keys: readonly RoutingBlockKey[]): Buffer {
  return Buffer.from(keys.join(''), 'latin1');
}

/** Block keys from their wire bytes; throws a RangeError when the length is not a whole number of keys. */
export function routingBlockKeysOf(bytes: Buffer, name: string): RoutingBlockKey[] {
  if (bytes.length % ROUTING_BLOCK_KEY_BYTES !== 0)
    throw new RangeError(`${name} is not a whole number of ${ROUTING_BLOCK_KEY_BYTES}-byte block keys`);
  const text = bytes.toString('latin1');
  const keys = new Array<RoutingBlockKey>(bytes.length / ROUTING_BLOCK_KEY_BYTES);
  for (let i = 0; i < keys.length; i++)
    keys[i] = text.slice(i * ROUTING_BLOCK_KEY_BYTES, (i + 1) * ROUTING_BLOCK_KEY_BYTES);
  return keys;
}

/**
 * A published state keyed with another secret than this router's: its blocks can never match this router's, so it
 * is refused (the router routes on its own view) rather than followed into predicting no hits anywhere.
 */
export class StateHashKeyMismatchError extends Error {
  constructor(peer: string, peerKey: { readonly id: string; readonly source: StateHashKeySource }, own: StateHashKey) {
    super(
      own.source === 'process'
        ? `this router has no --state-hash-key-file, so it cannot match the routing blocks ${peer} publishes (state-hash key id ${peerKey.id}); give it the key file the instance uses`
        : peerKey.source === 'process'
          ? `${peer} publishes routing blocks keyed with a random per-process secret (it has no --state-hash-key-file), which no other router holds; give every router the same --state-hash-key-file`
          : `${peer} publishes routing blocks keyed with another secret (state-hash key id ${peerKey.id}, this router's ${own.id}); give every router the same --state-hash-key-file`,
    );
    this.name = 'StateHashKeyMismatchError';
  }
}

/** Throws StateHashKeyMismatchError unless a peer's published state is keyed with `own`'s secret. */
export function checkStateHashKey(
  peer: string,
  peerKey: { readonly id: string; readonly source: StateHashKeySource },
  own: StateHashKey,
): void {
  if (peerKey.id !== own.id) throw new StateHashKeyMismatchError(peer, peerKey, own);
}
