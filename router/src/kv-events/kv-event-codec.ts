/**
 * vLLM's KV event payload (the third frame of `[topic, seq, payload]`): one msgpack `EventBatch` ↔ its decoded
 * form (kv-event.ts). vLLM has shipped two encodings of the same msgspec structs, and a stream may mix them:
 *
 * - positional (`array_like=True`, vLLM to v0.23: vllm/distributed/kv_events.py at vllm-project/vllm@b4e69e0a):
 *   batch `[ts, events, data_parallel_rank?]`, event `["BlockStored", block_hashes, parent_block_hash, token_ids,
 *   block_size, lora_id, medium?, lora_name?, extra_keys?, group_idx?, kv_cache_spec_kind?,
 *   kv_cache_spec_sliding_window?]`, `["BlockRemoved", block_hashes, medium?, group_idx?]`, `["AllBlocksCleared"]`;
 *   fields added over time are appended, and msgspec's `omit_defaults` drops trailing defaults;
 * - maps tagged by `"type"` (vLLM PR #42892: kv_events.py at vllm-project/vllm@0181ea31): batch `{ts, events,
 *   data_parallel_rank?}`, event `{type: "BlockStored", block_hashes, …}` with fields that have defaults omitted.
 *
 * The batch and each event are read independently (v0.26 sends map events inside a positional batch). A block
 * hash is an int (possibly beyond 2^53: decoded as a BigInt and kept as exact decimal text) or bytes (`0x` + hex,
 * since vLLM's sha256 hashes). Decoding never throws: bad input is a `KvDecodeFailure` naming what was wrong,
 * by field path and type only (never a value: token ids are prompts); an event of an unknown type is skipped
 * alone (a newer vLLM's event must not cost the batch's others).
 */
import { decode, encode } from '@msgpack/msgpack';
import type {
  AllBlocksClearedEvent,
  BlockRemovedEvent,
  BlockStoredEvent,
  EngineBlockHash,
  KvCacheEvent,
} from './kv-event';

/** How a struct is laid out on the wire: msgspec `array_like` (positional) or a map (tagged by `"type"`). */
export type KvWireEncoding = 'map' | 'positional';

/** The layout of the batch and of its events, chosen apart (v0.26: positional batch, map events). */
export interface KvPayloadEncoding {
  readonly batch: KvWireEncoding;
  readonly events: KvWireEncoding;
}

export const KV_WIRE_ENCODINGS: readonly KvWireEncoding[] = ['map', 'positional'];

/** What one payload holds: the batch less its frame (topic and sequence come from the other two frames). */
export interface KvEventPayload {
  readonly timestampSeconds: number;
  readonly events: readonly KvCacheEvent[];
  readonly dataParallelRank?: number;
}

/** Why a payload was refused (a closed set: the subscriber counts them by reason). */
export type KvDecodeFailureReason = 'undecodable' | 'bad-batch' | 'unknown-event' | 'bad-event';

export interface KvDecodeFailure {
  readonly ok: false;
  readonly reason: KvDecodeFailureReason;
  /** Which field was wrong and how (a path and a type; never a value). */
  readonly detail: string;
}

/**
 * A decoded payload. An event of a type this decoder does not know (a later vLLM's) is left out and described in
 * `skipped`, so the batch's other events still apply.
 */
export type KvDecodeResult =
  { readonly ok: true; readonly payload: KvEventPayload; readonly skipped: readonly string[] } | KvDecodeFailure;

/** The event tags vLLM sends (msgspec `tag=True`: the class name). */
const EVENT_TYPES = ['BlockStored', 'BlockRemoved', 'AllBlocksCleared'] as const;

/** Thrown inside the decoder only; decodeKvEventPayload turns it into a KvDecodeFailure. */
class WireError extends Error {
  constructor(
    readonly reason: KvDecodeFailureReason,
    message: string,
  ) {
    super(message);
  }
}

/** A value's wire type, for messages (never the value itself). */
function wireType(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (Array.isArray(value)) return 'array';
  if (value instanceof Uint8Array) return 'bytes';
  if (typeof value === 'bigint') return 'int';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (typeof value === 'object') return 'map';
  return typeof value;
}

function bad(path: string, expected: string, value: unknown): WireError {
  return new WireError('bad-event', `${path}: expected ${expected}, got ${wireType(value)}`);
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

function blockHash(value: unknown, path: string): EngineBlockHash {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number' && Number.isInteger(value)) return String(value);
  if (value instanceof Uint8Array && value.length > 0) {
    let text = '0x';
    for (const byte of value) text += HEX[byte];
    return text;
  }
  throw bad(path, 'an int or non-empty bytes block hash', value);
}

function blockHashList(value: unknown, path: string): EngineBlockHash[] {
  if (!Array.isArray(value)) throw bad(path, 'an array of block hashes', value);
  return value.map((hash, i) => blockHash(hash, `${path}[${i}]`));
}

/** An int field (msgpack int; a BigInt only when the wire used 64 bits, then it must still be a safe integer). */
function integer(value: unknown, path: string, min: number): number {
  const n = typeof value === 'bigint' && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < min)
    throw bad(path, min === 0 ? 'a non-negative int' : min === 1 ? 'a positive int' : 'an int', value);
  return n;
}

function optionalInteger(value: unknown, path: string, min: number): number | undefined {
  return value === null || value === undefined ? undefined : integer(value, path, min);
}

function optionalString(value: unknown, path: string): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value !== 'string') throw bad(path, 'a string or nil', value);
  return value;
}

function tokenIds(value: unknown, path: string): number[] {
  if (!Array.isArray(value)) throw bad(path, 'an array of token ids', value);
  for (let i = 0; i < value.length; i++) {
    const id: unknown = value[i];
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0) throw bad(`${path}[${i}]`, 'a token id', id);
  }
  return value as number[];
}

function extraKeys(value: unknown, path: string): (readonly unknown[] | null)[] | undefined {
  if (value === null || value === undefined) return undefined;
  if (!Array.isArray(value)) throw bad(path, 'an array (one entry per block) or nil', value);
  return value.map((keys: unknown, i) => {
    if (keys === null) return null;
    if (!Array.isArray(keys)) throw bad(`${path}[${i}]`, 'an array of keys or nil', keys);
    return keys as unknown[];
  });
}

/** BlockStored's fields in wire order (the positional layout; the map layout uses the same names). */
const STORED_FIELDS = [
  'block_hashes',
  'parent_block_hash',
  'token_ids',
  'block_size',
  'lora_id',
  'medium',
  'lora_name',
  'extra_keys',
  'group_idx',
  'kv_cache_spec_kind',
  'kv_cache_spec_sliding_window',
] as const;
/** Fields every vLLM with events sent (v0.9's first BlockStored); later ones may be missing. */
const STORED_REQUIRED = 5;
const REMOVED_FIELDS = ['block_hashes', 'medium', 'group_idx'] as const;
const REMOVED_REQUIRED = 1;

type Fields = Readonly<Record<string, unknown>>;

function storedEvent(f: Fields, at: string): BlockStoredEvent {
  const parent = f.parent_block_hash;
  const event: BlockStoredEvent = {
    type: 'BlockStored',
    blockHashes: blockHashList(f.block_hashes, `${at}.block_hashes`),
    ...(parent === null || parent === undefined
      ? {}
      : { parentBlockHash: blockHash(parent, `${at}.parent_block_hash`) }),
    tokenIds: tokenIds(f.token_ids, `${at}.token_ids`),
    blockSize: integer(f.block_size, `${at}.block_size`, 1),
  };
  const optional: Partial<Record<keyof BlockStoredEvent, unknown>> = {
    loraId: optionalInteger(f.lora_id, `${at}.lora_id`, Number.MIN_SAFE_INTEGER),
    medium: optionalString(f.medium, `${at}.medium`),
    loraName: optionalString(f.lora_name, `${at}.lora_name`),
    extraKeys: extraKeys(f.extra_keys, `${at}.extra_keys`),
    groupIdx: optionalInteger(f.group_idx, `${at}.group_idx`, 0),
    kvCacheSpecKind: optionalString(f.kv_cache_spec_kind, `${at}.kv_cache_spec_kind`),
    kvCacheSpecSlidingWindow: optionalInteger(f.kv_cache_spec_sliding_window, `${at}.kv_cache_spec_sliding_window`, 0),
  };
  return withDefined(event, optional);
}

function removedEvent(f: Fields, at: string): BlockRemovedEvent {
  const event: BlockRemovedEvent = {
    type: 'BlockRemoved',
    blockHashes: blockHashList(f.block_hashes, `${at}.block_hashes`),
  };
  return withDefined(event, {
    medium: optionalString(f.medium, `${at}.medium`),
    groupIdx: optionalInteger(f.group_idx, `${at}.group_idx`, 0),
  });
}

/** `event` with the optional fields that are defined (absent ones stay absent, not `undefined`). */
function withDefined<T extends object>(event: T, optional: Readonly<Record<string, unknown>>): T {
  const out: Record<string, unknown> = { ...(event as Record<string, unknown>) };
  for (const [key, value] of Object.entries(optional)) if (value !== undefined) out[key] = value;
  return out as T;
}

/** A positional event's fields by name; fewer than `required` is a truncated event. */
function positionalFields(items: readonly unknown[], names: readonly string[], required: number, at: string): Fields {
  if (items.length - 1 < required)
    throw new WireError('bad-event', `${at}: ${items[0] as string} has ${items.length - 1} fields, needs ${required}`);
  const fields: Record<string, unknown> = {};
  names.forEach((name, i) => {
    if (i + 1 < items.length) fields[name] = items[i + 1];
  });
  return fields;
}

function mapFields(value: object, names: readonly string[], required: number, at: string, type: string): Fields {
  const fields = value as Fields;
  for (const name of names.slice(0, required))
    if (!(name in fields)) throw new WireError('bad-event', `${at}: ${type} has no ${name}`);
  return fields;
}

function decodeEvent(value: unknown, at: string): KvCacheEvent {
  const positional = Array.isArray(value);
  if (!positional && (value === null || typeof value !== 'object' || value instanceof Uint8Array))
    throw new WireError('bad-event', `${at}: expected an event array or map, got ${wireType(value)}`);
  const tag: unknown = positional ? (value as unknown[])[0] : (value as Fields).type;
  if (typeof tag !== 'string')
    throw new WireError('bad-event', `${at}: the event tag is ${wireType(tag)}, not a string`);
  if (!(EVENT_TYPES as readonly string[]).includes(tag))
    throw new WireError('unknown-event', `${at}: unknown event type (${JSON.stringify(tag.slice(0, 40))})`);
  if (tag === 'AllBlocksCleared') return { type: 'AllBlocksCleared' } satisfies AllBlocksClearedEvent;
  const [names, required] =
    tag === 'BlockStored' ? [STORED_FIELDS, STORED_REQUIRED] : [REMOVED_FIELDS, REMOVED_REQUIRED];
  const fields = positional
    ? positionalFields(value as unknown[], names, required, at)
    : mapFields(value, names, required, at, tag);
  return tag === 'BlockStored' ? storedEvent(fields, at) : removedEvent(fields, at);
}

function decodeEvents(events: readonly unknown[], skipped: string[]): KvCacheEvent[] {
  const decoded: KvCacheEvent[] = [];
  events.forEach((event, i) => {
    try {
      decoded.push(decodeEvent(event, `events[${i}]`));
    } catch (err) {
      if (!(err instanceof WireError) || err.reason !== 'unknown-event') throw err;
      skipped.push(err.message);
    }
  });
  return decoded;
}

function decodeBatch(value: unknown, skipped: string[]): KvEventPayload {
  let ts: unknown;
  let events: unknown;
  let rank: unknown;
  if (Array.isArray(value)) {
    if (value.length < 2)
      throw new WireError('bad-batch', `batch: a positional batch has ${value.length} fields, needs ts and events`);
    [ts, events, rank] = value as unknown[];
  } else if (value !== null && typeof value === 'object' && !(value instanceof Uint8Array)) {
    ({ ts, events, data_parallel_rank: rank } = value as Fields);
  } else {
    throw new WireError('bad-batch', `batch: expected an array or a map, got ${wireType(value)}`);
  }
  const seconds = typeof ts === 'bigint' ? Number(ts) : ts;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds))
    throw new WireError('bad-batch', `batch.ts: expected a number, got ${wireType(ts)}`);
  if (!Array.isArray(events))
    throw new WireError('bad-batch', `batch.events: expected an array, got ${wireType(events)}`);
  let dataParallelRank: number | undefined;
  try {
    dataParallelRank = optionalInteger(rank, 'batch.data_parallel_rank', 0);
  } catch (err) {
    throw new WireError('bad-batch', (err as Error).message);
  }
  return {
    timestampSeconds: seconds,
    events: decodeEvents(events, skipped),
    ...(dataParallelRank === undefined ? {} : { dataParallelRank }),
  };
}

/** Decodes one payload; never throws. */
export function decodeKvEventPayload(payload: Uint8Array): KvDecodeResult {
  let value: unknown;
  try {
    value = decode(payload, { useBigInt64: true });
  } catch (err) {
    // The library's message names a byte position or a type code, never the payload's bytes.
    return { ok: false, reason: 'undecodable', detail: `not one msgpack value: ${(err as Error).message}` };
  }
  try {
    const skipped: string[] = [];
    const payload = decodeBatch(value, skipped);
    return { ok: true, payload, skipped };
  } catch (err) {
    if (err instanceof WireError) return { ok: false, reason: err.reason, detail: err.message };
    return { ok: false, reason: 'undecodable', detail: `decode failed: ${(err as Error).message}` };
  }
}

/** A decoded hash back to its wire form: a safe integer, a BigInt (int64/uint64), or bytes. */
function wireHash(hash: EngineBlockHash): number | bigint | Uint8Array {
  if (hash.startsWith('0x')) {
    if (!/^0x(?:[0-9a-f]{2})+$/.test(hash)) throw new RangeError(`block hash ${hash} is not 0x + lowercase hex bytes`);
    return Uint8Array.from(Buffer.from(hash.slice(2), 'hex'));
  }
  if (!/^-?\d+$/.test(hash)) throw new RangeError(`block hash "${hash}" is neither decimal digits nor 0x + hex`);
  const n = BigInt(hash);
  if (n < -(2n ** 63n) || n >= 2n ** 64n) throw new RangeError(`block hash ${hash} does not fit msgpack's 64-bit ints`);
  return n >= -(2n ** 31n) && n < 2n ** 32n ? Number(n) : n;
}

/**
 * An int field for the encoder: with `useBigInt64` the msgpack library writes a number beyond 32 bits as a float,
 * so those go as BigInt (int64/uint64, as msgspec writes them).
 */
function wireInt(value: number | undefined): number | bigint | undefined {
  if (value === undefined) return undefined;
  return value >= -(2 ** 31) && value < 2 ** 32 ? value : BigInt(value);
}

/** msgspec's layout: fields in order, nil for absent ones, trailing defaults dropped (positional) or omitted (map). */
function eventFields(event: KvCacheEvent): [string, unknown][] {
  if (event.type === 'AllBlocksCleared') return [];
  if (event.type === 'BlockRemoved')
    return [
      ['block_hashes', event.blockHashes.map(wireHash)],
      ['medium', event.medium ?? null],
      ['group_idx', wireInt(event.groupIdx)],
    ];
  return [
    ['block_hashes', event.blockHashes.map(wireHash)],
    ['parent_block_hash', event.parentBlockHash === undefined ? null : wireHash(event.parentBlockHash)],
    ['token_ids', event.tokenIds],
    ['block_size', wireInt(event.blockSize)],
    ['lora_id', wireInt(event.loraId) ?? null],
    ['medium', event.medium ?? null],
    ['lora_name', event.loraName ?? null],
    ['extra_keys', event.extraKeys],
    ['group_idx', wireInt(event.groupIdx)],
    ['kv_cache_spec_kind', event.kvCacheSpecKind],
    ['kv_cache_spec_sliding_window', wireInt(event.kvCacheSpecSlidingWindow)],
  ];
}

function encodeEvent(event: KvCacheEvent, encoding: KvWireEncoding): unknown {
  const fields = eventFields(event);
  if (encoding === 'map') {
    const out: Record<string, unknown> = { type: event.type };
    for (const [name, value] of fields) if (value !== undefined) out[name] = value;
    return out;
  }
  let last = fields.length;
  while (last > 0 && fields[last - 1][1] === undefined) last--;
  return [event.type, ...fields.slice(0, last).map(([, value]) => value ?? null)];
}

/** Encodes one payload as vLLM's msgspec encoder would (for the emulator's publisher and tests). */
export function encodeKvEventPayload(payload: KvEventPayload, encoding: KvPayloadEncoding): Uint8Array {
  const events = payload.events.map((event) => encodeEvent(event, encoding.events));
  const rank = wireInt(payload.dataParallelRank);
  const batch =
    encoding.batch === 'map'
      ? { ts: payload.timestampSeconds, events, ...(rank === undefined ? {} : { data_parallel_rank: rank }) }
      : [payload.timestampSeconds, events, ...(rank === undefined ? [] : [rank])];
  return encode(batch, { useBigInt64: true });
}
