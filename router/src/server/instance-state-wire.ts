import type { InstanceStateUpdate } from '../state/instance-state-log';
import { routingBlockKeyBytes, routingBlockKeysOf, type RoutingBlockKey } from '../state/state-hash-key';

/**
 * The JSON form of an InstanceStateUpdate (GET /router/v1/instance-state). Block hashes travel as base64 of
 * their 8 bytes each (64-bit keyed tags, StateHashKey) and recency numbers as base64 of little-endian 64-bit
 * floats: a full index of 15,625 blocks is 333 KB of base64, a typical update a few hundred bytes. An event is a
 * base64 string (a prompt's blocks recorded) or a number (every block used no later than that recency evicted).
 * `hashKey` names the secret the blocks are keyed with by its public id, so an observer holding another refuses
 * them (StateHashKeyMismatchError) instead of matching nothing.
 *
 * v2 (keyed 64-bit block hashes) replaced v1 (unkeyed 32-bit): the formats differ in name, so a router of one
 * version observing the other refuses it, saying which it got.
 */
export const INSTANCE_STATE_FORMAT = 'prefix-router/instance-state/v2';
const FORMAT_PREFIX = 'prefix-router/instance-state/';

export function encodeInstanceState(update: InstanceStateUpdate): string {
  return JSON.stringify({
    format: INSTANCE_STATE_FORMAT,
    epoch: update.epoch,
    seq: update.seq,
    version: update.version,
    blockChars: update.blockChars,
    hashKey: { id: update.hashKeyId, source: update.hashKeySource },
    capacityBlocks: update.capacityBlocks,
    load: update.load,
    ...(update.snapshot !== undefined
      ? {
          snapshot: {
            clock: update.snapshot.clock,
            hashes: keysBase64(update.snapshot.hashes),
            recency: floatsBase64(update.snapshot.recency),
          },
        }
      : {}),
    ...(update.events !== undefined
      ? { events: update.events.map((e) => ('record' in e ? keysBase64(e.record) : e.evictNotNewerThan)) }
      : {}),
  });
}

/** Parses and checks an update; throws a RangeError saying what is wrong (the observer then starts over). */
export function decodeInstanceState(value: unknown): InstanceStateUpdate {
  const o = object(value, 'update');
  if (o.format !== INSTANCE_STATE_FORMAT) {
    const older =
      typeof o.format === 'string' && o.format.startsWith(FORMAT_PREFIX) && o.format < INSTANCE_STATE_FORMAT;
    throw new RangeError(
      `instance state: format must be ${INSTANCE_STATE_FORMAT} (got ${String(o.format).slice(0, 64)}${older ? ': a router from before keyed block hashes; upgrade it and give every router the same --state-hash-key-file' : ''})`,
    );
  }
  if (typeof o.epoch !== 'string' || o.epoch.length === 0 || o.epoch.length > 64)
    throw new RangeError('instance state: epoch must be a string of 1-64 characters');
  const load = object(o.load, 'load');
  const hashKey = object(o.hashKey, 'hashKey');
  if (typeof hashKey.id !== 'string' || !/^[0-9a-f]{16}$/.test(hashKey.id))
    throw new RangeError('instance state: hashKey.id must be 16 hex digits');
  if (hashKey.source !== 'file' && hashKey.source !== 'process')
    throw new RangeError("instance state: hashKey.source must be 'file' or 'process'");
  const update: InstanceStateUpdate = {
    epoch: o.epoch,
    seq: count(o.seq, 'seq'),
    version: count(o.version, 'version'),
    blockChars: count(o.blockChars, 'blockChars', 1),
    hashKeyId: hashKey.id,
    hashKeySource: hashKey.source,
    capacityBlocks: count(o.capacityBlocks, 'capacityBlocks', 1),
    load: {
      inFlight: count(load.inFlight, 'load.inFlight'),
      queuedPrefillTokens: count(load.queuedPrefillTokens, 'load.queuedPrefillTokens'),
      decodeSequences: count(load.decodeSequences, 'load.decodeSequences'),
    },
  };
  if (o.snapshot !== undefined) {
    const s = object(o.snapshot, 'snapshot');
    const hashes = keysOf(s.hashes, 'snapshot.hashes');
    const recency = float64sOf(s.recency, 'snapshot.recency');
    if (hashes.length !== recency.length)
      throw new RangeError('instance state: snapshot.hashes and snapshot.recency differ in length');
    return { ...update, snapshot: { clock: count(s.clock, 'snapshot.clock'), hashes, recency } };
  }
  if (!Array.isArray(o.events)) throw new RangeError('instance state: an update needs a snapshot or events');
  return {
    ...update,
    events: o.events.map((e, i) =>
      typeof e === 'number' ? { evictNotNewerThan: count(e, `events[${i}]`) } : { record: keysOf(e, `events[${i}]`) },
    ),
  };
}

function keysBase64(keys: readonly RoutingBlockKey[]): string {
  return routingBlockKeyBytes(keys).toString('base64');
}

function floatsBase64(values: Float64Array): string {
  const bytes = Buffer.allocUnsafe(values.length * 8);
  for (let i = 0; i < values.length; i++) bytes.writeDoubleLE(values[i], i * 8);
  return bytes.toString('base64');
}

function bytesOf(value: unknown, name: string, width: number): Buffer {
  if (typeof value !== 'string') throw new RangeError(`instance state: ${name} must be a base64 string`);
  const bytes = Buffer.from(value, 'base64');
  if (bytes.length % width !== 0)
    throw new RangeError(`instance state: ${name} is not a whole number of ${width}-byte values`);
  return bytes;
}

function keysOf(value: unknown, name: string): RoutingBlockKey[] {
  return routingBlockKeysOf(bytesOf(value, name, 8), `instance state: ${name}`);
}

function float64sOf(value: unknown, name: string): Float64Array {
  const bytes = bytesOf(value, name, 8);
  const out = new Float64Array(bytes.length / 8);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readDoubleLE(i * 8);
  return out;
}

function object(value: unknown, name: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new RangeError(`instance state: ${name} must be an object`);
  return value as Record<string, unknown>;
}

function count(value: unknown, name: string, min = 0): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min)
    throw new RangeError(`instance state: ${name} must be an integer ≥ ${min} (got ${String(value)})`);
  return value;
}
