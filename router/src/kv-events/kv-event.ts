/**
 * vLLM's KV cache events as this project reads them (vllm/distributed/kv_events.py, vllm-project/vllm@0181ea31):
 * an engine started with `--kv-events-config '{"enable_kv_cache_events": true, "publisher": "zmq", ...}'` publishes
 * what its prefix cache stores and evicts, as msgpack batches on a ZeroMQ PUB socket. One decoded, encoding-free
 * form shared by the subscriber (which decodes the wire), the emulator (which publishes it) and the engine index
 * (which applies it).
 */

/**
 * An engine's block hash (vLLM's `ExternalBlockHash`: an int, or bytes since the hash became sha256-based), kept
 * as the wire gave it: decimal digits for an int, `0x` + lowercase hex for bytes. Opaque to the router, which
 * keys blocks by its own chain over the token ids instead.
 */
export type EngineBlockHash = string;

/** Blocks an engine filled (vLLM `BlockStored`): `blockHashes[i]` holds `tokenIds[i*blockSize, (i+1)*blockSize)`. */
export interface BlockStoredEvent {
  readonly type: 'BlockStored';
  readonly blockHashes: readonly EngineBlockHash[];
  /** The block before the first one here, when these continue a stored prefix; absent for a prompt's first block. */
  readonly parentBlockHash?: EngineBlockHash;
  readonly tokenIds: readonly number[];
  readonly blockSize: number;
  /** Deprecated on the wire in favour of loraName; read when present. */
  readonly loraId?: number;
  readonly loraName?: string;
  /** Where the blocks live (`GPU`, or a connector's tier such as `CPU`); absent on engines older than the field. */
  readonly medium?: string;
  /** Per block, the extra keys (LoRA, multimodal hashes, cache_salt) the engine hashed with the tokens. */
  readonly extraKeys?: readonly (readonly unknown[] | null)[];
  /** The KV cache group (hybrid models); absent means group 0. */
  readonly groupIdx?: number;
  readonly kvCacheSpecKind?: string;
  readonly kvCacheSpecSlidingWindow?: number;
}

/** Blocks an engine evicted (vLLM `BlockRemoved`). */
export interface BlockRemovedEvent {
  readonly type: 'BlockRemoved';
  readonly blockHashes: readonly EngineBlockHash[];
  readonly medium?: string;
  readonly groupIdx?: number;
}

/** The engine emptied its prefix cache (vLLM `AllBlocksCleared`: reset_prefix_cache, or a restart's first word). */
export interface AllBlocksClearedEvent {
  readonly type: 'AllBlocksCleared';
}

export type KvCacheEvent = BlockStoredEvent | BlockRemovedEvent | AllBlocksClearedEvent;

/** One published message: `[topic, 8-byte big-endian sequence, msgpack EventBatch]`, decoded. */
export interface KvEventBatch {
  readonly topic: string;
  /** The publisher's sequence number (0, 1, 2, … per engine process); a jump is a lost batch. */
  readonly seq: bigint;
  /** The engine's wall clock when it built the batch, in seconds. */
  readonly timestampSeconds: number;
  readonly events: readonly KvCacheEvent[];
  readonly dataParallelRank?: number;
}

/**
 * What consumes an engine's event stream (the engine index): batches in sequence order, and word that the stream
 * lost batches it could not replay, after which what it believed of that engine is unknown until a resync.
 */
export interface KvEventSink {
  applyBatch(engine: string, batch: KvEventBatch): void;
  /** Batches were lost for good: forget `engine`'s blocks and treat its state as unknown (fall back to the estimate). */
  markStale(engine: string, reason: string): void;
}
