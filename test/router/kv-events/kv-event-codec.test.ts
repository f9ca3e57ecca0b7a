import { decode, encode } from '@msgpack/msgpack';
import fc from 'fast-check';
import {
  decodeKvEventPayload,
  encodeKvEventPayload,
  type KvEventPayload,
  type KvPayloadEncoding,
} from '../../../router/src/kv-events/kv-event-codec';
import type { KvCacheEvent } from '../../../router/src/kv-events/kv-event';

/** Hashes as vLLM sends them: signed or unsigned 64-bit ints (Python hash, sha256 truncated) or sha256 bytes. */
const engineHash = fc.oneof(
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 64n - 1n }).map((n) => n.toString()),
  fc.integer({ min: 0, max: 1000 }).map(String),
  fc.uint8Array({ minLength: 1, maxLength: 32 }).map((bytes) => `0x${Buffer.from(bytes).toString('hex')}`),
);
const small = fc.integer({ min: 0, max: 4096 });
const maybe = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(arb, { nil: undefined });

const storedEvent: fc.Arbitrary<KvCacheEvent> = fc
  .record({
    blockHashes: fc.array(engineHash, { maxLength: 4 }),
    parentBlockHash: maybe(engineHash),
    tokenIds: fc.array(fc.integer({ min: 0, max: 2 ** 31 }), { maxLength: 64 }),
    blockSize: fc.integer({ min: 1, max: 2 ** 40 }),
    loraId: maybe(fc.integer({ min: -(2 ** 40), max: 2 ** 40 })),
    loraName: maybe(fc.string()),
    medium: maybe(fc.constantFrom('GPU', 'CPU')),
    extraKeys: maybe(fc.array(fc.option(fc.array(fc.oneof(fc.string(), small)), { nil: null }), { maxLength: 4 })),
    groupIdx: maybe(small),
    kvCacheSpecKind: maybe(fc.constantFrom('full_attention', 'sliding_window')),
    kvCacheSpecSlidingWindow: maybe(small),
  })
  .map((fields) => {
    const event: Record<string, unknown> = { type: 'BlockStored' };
    for (const [key, value] of Object.entries(fields)) if (value !== undefined) event[key] = value;
    return event as unknown as KvCacheEvent;
  });
const removedEvent: fc.Arbitrary<KvCacheEvent> = fc
  .record({ blockHashes: fc.array(engineHash, { maxLength: 4 }), medium: maybe(fc.string()), groupIdx: maybe(small) })
  .map(({ blockHashes, medium, groupIdx }) => ({
    type: 'BlockRemoved',
    blockHashes,
    ...(medium === undefined ? {} : { medium }),
    ...(groupIdx === undefined ? {} : { groupIdx }),
  }));
const anyEvent = fc.oneof(storedEvent, removedEvent, fc.constant<KvCacheEvent>({ type: 'AllBlocksCleared' }));
const payload: fc.Arbitrary<KvEventPayload> = fc
  .record({
    // Wall-clock seconds; msgpack writes an integral double as an int, so -0 would come back as 0.
    timestampSeconds: fc.double({ min: 0, noNaN: true, noDefaultInfinity: true }).map((s) => (s === 0 ? 0 : s)),
    events: fc.array(anyEvent, { maxLength: 5 }),
    dataParallelRank: maybe(small),
  })
  .map(({ dataParallelRank, ...rest }) => ({
    ...rest,
    ...(dataParallelRank === undefined ? {} : { dataParallelRank }),
  }));
const encoding: fc.Arbitrary<KvPayloadEncoding> = fc.record({
  batch: fc.constantFrom('map' as const, 'positional' as const),
  events: fc.constantFrom('map' as const, 'positional' as const),
});

function failureOf(value: unknown): { reason: string; detail: string } {
  const result = decodeKvEventPayload(encode(value, { useBigInt64: true }));
  if (result.ok) throw new Error('expected a decode failure');
  return result;
}

describe('KV event codec', () => {
  test('GIVEN any batch in any encoding (map, positional, or mixed as v0.26) WHEN encoded and decoded THEN it is the same batch', () => {
    fc.assert(
      fc.property(payload, encoding, (batch, layout) => {
        const result = decodeKvEventPayload(encodeKvEventPayload(batch, layout));
        expect(result).toEqual({ ok: true, payload: batch, skipped: [] });
      }),
      { numRuns: 300 },
    );
  });

  test('GIVEN arbitrary bytes WHEN decoded THEN the decoder answers (ok or a typed failure) and never throws', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const result = decodeKvEventPayload(bytes);
        if (!result.ok) expect(['undecodable', 'bad-batch', 'unknown-event', 'bad-event']).toContain(result.reason);
      }),
      { numRuns: 2000 },
    );
  });

  test('GIVEN a valid payload cut short at any byte WHEN decoded THEN a typed failure, never a throw', () => {
    const bytes = encodeKvEventPayload(
      {
        timestampSeconds: 1.5,
        events: [{ type: 'BlockStored', blockHashes: ['1', '2'], tokenIds: [1, 2, 3, 4], blockSize: 2 }],
      },
      { batch: 'map', events: 'map' },
    );
    for (let cut = 0; cut < bytes.length; cut++) {
      const result = decodeKvEventPayload(bytes.subarray(0, cut));
      expect(result).toMatchObject({ ok: false, reason: 'undecodable' });
    }
  });

  describe('when reading what vLLM versions sent', () => {
    test('GIVEN a v0.9-style positional event without medium THEN it decodes with the fields it had', () => {
      const bytes = encode([1700000000.25, [['BlockStored', [11, 12], null, [1, 2, 3, 4], 2, null]]]);
      expect(decodeKvEventPayload(bytes)).toEqual({
        ok: true,
        skipped: [],
        payload: {
          timestampSeconds: 1700000000.25,
          events: [{ type: 'BlockStored', blockHashes: ['11', '12'], tokenIds: [1, 2, 3, 4], blockSize: 2 }],
        },
      });
    });

    test('GIVEN a uint64 hash above 2^53 THEN its decimal text is exact', () => {
      const hash = 2n ** 64n - 1n;
      const bytes = encode([0, [['BlockRemoved', [hash], 'GPU']], 3], { useBigInt64: true });
      expect(decodeKvEventPayload(bytes)).toEqual({
        ok: true,
        skipped: [],
        payload: {
          timestampSeconds: 0,
          events: [{ type: 'BlockRemoved', blockHashes: ['18446744073709551615'], medium: 'GPU' }],
          dataParallelRank: 3,
        },
      });
    });

    test('GIVEN sha256 bytes hashes in map events inside a positional batch (v0.26) THEN hashes are 0x + hex', () => {
      const bytes = encode([
        2.5,
        [
          {
            type: 'BlockStored',
            block_hashes: [Uint8Array.from([0xab, 0x01])],
            parent_block_hash: Uint8Array.from([0xff]),
            token_ids: [7, 8],
            block_size: 2,
            lora_id: null,
            medium: 'GPU',
            lora_name: 'sql',
            extra_keys: [['sql']],
          },
          { type: 'AllBlocksCleared' },
        ],
      ]);
      const result = decodeKvEventPayload(bytes);
      expect(result).toEqual({
        ok: true,
        skipped: [],
        payload: {
          timestampSeconds: 2.5,
          events: [
            {
              type: 'BlockStored',
              blockHashes: ['0xab01'],
              parentBlockHash: '0xff',
              tokenIds: [7, 8],
              blockSize: 2,
              medium: 'GPU',
              loraName: 'sql',
              extraKeys: [['sql']],
            },
            { type: 'AllBlocksCleared' },
          ],
        },
      });
    });

    test('GIVEN a map event with fields a later vLLM added THEN the unknown fields are ignored', () => {
      const bytes = encode({ ts: 1, events: [{ type: 'BlockRemoved', block_hashes: [5], medium: null, tier: 'x' }] });
      expect(decodeKvEventPayload(bytes)).toEqual({
        ok: true,
        skipped: [],
        payload: { timestampSeconds: 1, events: [{ type: 'BlockRemoved', blockHashes: ['5'] }] },
      });
    });
  });

  test('GIVEN an event of a type a later vLLM added THEN it alone is skipped and named, the others decode', () => {
    const bytes = encode([
      0,
      [
        ['BlockPinned', [1]],
        ['BlockRemoved', [2]],
      ],
    ]);
    expect(decodeKvEventPayload(bytes)).toEqual({
      ok: true,
      skipped: ['events[0]: unknown event type ("BlockPinned")'],
      payload: { timestampSeconds: 0, events: [{ type: 'BlockRemoved', blockHashes: ['2'] }] },
    });
  });

  describe('when the payload is wrong', () => {
    test.each([
      ['an event tag that is not a string', [0, [[7, [1]]]], 'bad-event', /events\[0\]: the event tag is int/],
      ['a truncated positional event', [0, [['BlockStored', [1], null]]], 'bad-event', /has 2 fields, needs 5/],
      ['a map event missing a field', { ts: 0, events: [{ type: 'BlockStored' }] }, 'bad-event', /has no block_hashes/],
      [
        'a string token id',
        [0, [['BlockStored', [1], null, [1, 'x'], 2, null]]],
        'bad-event',
        /events\[0\]\.token_ids\[1\]: expected a token id, got string/,
      ],
      [
        'a float block hash',
        [0, [['BlockRemoved', [1.5]]]],
        'bad-event',
        /block_hashes\[0\]: expected an int or non-empty bytes/,
      ],
      [
        'a zero block size',
        [0, [['BlockStored', [1], null, [], 0, null]]],
        'bad-event',
        /block_size: expected a positive/,
      ],
      ['a batch without events', [0], 'bad-batch', /needs ts and events/],
      ['a string timestamp', ['now', []], 'bad-batch', /batch\.ts: expected a number, got string/],
      ['events that are a map', { ts: 0, events: {} }, 'bad-batch', /batch\.events: expected an array, got map/],
      ['a negative data parallel rank', [0, [], -1], 'bad-batch', /data_parallel_rank: expected a non-negative int/],
      ['a scalar payload', 42, 'bad-batch', /expected an array or a map, got int/],
    ])('GIVEN %s THEN a typed failure names it', (_name, value, reason, detail) => {
      const failure = failureOf(value);
      expect(failure.reason).toBe(reason);
      expect(failure.detail).toMatch(detail);
    });

    test('GIVEN a bad token id THEN the failure names the field and its type, never the tokens around it', () => {
      const failure = failureOf([0, [['BlockStored', [1], null, [123456, 'secret'], 2, null]]]);
      expect(failure.detail).not.toMatch(/123456|secret/);
    });

    test('GIVEN two msgpack values back to back THEN undecodable (one payload is one value)', () => {
      const bytes = Buffer.concat([encode([0, []]), encode([0, []])]);
      expect(decodeKvEventPayload(bytes)).toMatchObject({ ok: false, reason: 'undecodable' });
    });
  });

  describe('when encoding', () => {
    test('GIVEN map encoding THEN fields with defaults are omitted and the rest present, as msgspec omit_defaults', () => {
      const bytes = encodeKvEventPayload(
        { timestampSeconds: 1, events: [{ type: 'BlockStored', blockHashes: ['1'], tokenIds: [1], blockSize: 1 }] },
        { batch: 'map', events: 'map' },
      );
      expect(decode(bytes)).toEqual({
        ts: 1,
        events: [
          {
            type: 'BlockStored',
            block_hashes: [1],
            parent_block_hash: null,
            token_ids: [1],
            block_size: 1,
            lora_id: null,
            medium: null,
            lora_name: null,
          },
        ],
      });
    });

    test('GIVEN positional encoding with only a later field set THEN earlier optional fields are nil', () => {
      const bytes = encodeKvEventPayload(
        { timestampSeconds: 1, events: [{ type: 'BlockRemoved', blockHashes: ['1'], groupIdx: 2 }] },
        { batch: 'positional', events: 'positional' },
      );
      expect(decode(bytes)).toEqual([1, [['BlockRemoved', [1], null, 2]]]);
    });

    test.each([['12x'], ['0xABC'], [(2n ** 64n).toString()]])('GIVEN hash %s THEN encoding refuses it', (hash) => {
      expect(() =>
        encodeKvEventPayload(
          { timestampSeconds: 0, events: [{ type: 'BlockRemoved', blockHashes: [hash] }] },
          { batch: 'map', events: 'map' },
        ),
      ).toThrow(RangeError);
    });
  });
});
