import type { InstanceStateUpdate } from '../state/instance-state-log';

/**
 * The JSON form of an InstanceStateUpdate (GET /router/v1/instance-state). Block hashes travel as base64 of
 * their little-endian 32-bit words and recency numbers as base64 of 64-bit floats: a full index of 15,625 blocks
 * is 250 KB of base64, a typical update a few hundred bytes. An event is a base64 string (a prompt's blocks
 * recorded) or a number (every block used no later than that recency evicted).
 */
export const INSTANCE_STATE_FORMAT = 'prefix-router/instance-state/v1';

export function encodeInstanceState(update: InstanceStateUpdate): string {
  return JSON.stringify({
    format: INSTANCE_STATE_FORMAT,
    epoch: update.epoch,
    seq: update.seq,
    version: update.version,
    blockChars: update.blockChars,
    capacityBlocks: update.capacityBlocks,
    load: update.load,
    ...(update.snapshot !== undefined
      ? { snapshot: { clock: update.snapshot.clock, hashes: base64Of(update.snapshot.hashes), recency: base64Of(update.snapshot.recency) } }
      : {}),
    ...(update.events !== undefined ? { events: update.events.map((e) => ('record' in e ? base64Of(e.record) : e.evictNotNewerThan)) } : {}),
  });
}

/** Parses and checks an update; throws a RangeError saying what is wrong (the observer then starts over). */
export function decodeInstanceState(value: unknown): InstanceStateUpdate {
  const o = object(value, 'update');
  if (o.format !== INSTANCE_STATE_FORMAT) throw new RangeError(`instance state: format must be ${INSTANCE_STATE_FORMAT} (got ${String(o.format)})`);
  if (typeof o.epoch !== 'string' || o.epoch.length === 0 || o.epoch.length > 64) throw new RangeError('instance state: epoch must be a string of 1-64 characters');
  const load = object(o.load, 'load');
  const update: InstanceStateUpdate = {
    epoch: o.epoch,
    seq: count(o.seq, 'seq'),
    version: count(o.version, 'version'),
    blockChars: count(o.blockChars, 'blockChars', 1),
    capacityBlocks: count(o.capacityBlocks, 'capacityBlocks', 1),
    load: { inFlight: count(load.inFlight, 'load.inFlight'), queuedPrefillTokens: count(load.queuedPrefillTokens, 'load.queuedPrefillTokens'), decodeSequences: count(load.decodeSequences, 'load.decodeSequences') },
  };
  if (o.snapshot !== undefined) {
    const s = object(o.snapshot, 'snapshot');
    const hashes = int32sOf(s.hashes, 'snapshot.hashes');
    const recency = float64sOf(s.recency, 'snapshot.recency');
    if (hashes.length !== recency.length) throw new RangeError('instance state: snapshot.hashes and snapshot.recency differ in length');
    return { ...update, snapshot: { clock: count(s.clock, 'snapshot.clock'), hashes, recency } };
  }
  if (!Array.isArray(o.events)) throw new RangeError('instance state: an update needs a snapshot or events');
  return { ...update, events: o.events.map((e, i) => (typeof e === 'number' ? { evictNotNewerThan: count(e, `events[${i}]`) } : { record: int32sOf(e, `events[${i}]`) })) };
}

function base64Of(values: Int32Array | Float64Array): string {
  const width = values.BYTES_PER_ELEMENT;
  const bytes = Buffer.allocUnsafe(values.length * width);
  if (values instanceof Int32Array) for (let i = 0; i < values.length; i++) bytes.writeInt32LE(values[i], i * 4);
  else for (let i = 0; i < values.length; i++) bytes.writeDoubleLE(values[i], i * 8);
  return bytes.toString('base64');
}

function bytesOf(value: unknown, name: string, width: number): Buffer {
  if (typeof value !== 'string') throw new RangeError(`instance state: ${name} must be a base64 string`);
  const bytes = Buffer.from(value, 'base64');
  if (bytes.length % width !== 0) throw new RangeError(`instance state: ${name} is not a whole number of ${width}-byte values`);
  return bytes;
}

function int32sOf(value: unknown, name: string): Int32Array {
  const bytes = bytesOf(value, name, 4);
  const out = new Int32Array(bytes.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readInt32LE(i * 4);
  return out;
}

function float64sOf(value: unknown, name: string): Float64Array {
  const bytes = bytesOf(value, name, 8);
  const out = new Float64Array(bytes.length / 8);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readDoubleLE(i * 8);
  return out;
}

function object(value: unknown, name: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new RangeError(`instance state: ${name} must be an object`);
  return value as Record<string, unknown>;
}

function count(value: unknown, name: string, min = 0): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) throw new RangeError(`instance state: ${name} must be an integer ≥ ${min} (got ${String(value)})`);
  return value;
}
