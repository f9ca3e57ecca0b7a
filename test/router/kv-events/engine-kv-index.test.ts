import fc from 'fast-check';
import { EngineKvIndex } from '../../../router/src/kv-events/engine-kv-index';
import type { KvCacheEvent, KvEventBatch } from '../../../router/src/kv-events/kv-event';
import { PromptBlocks } from '../../../router/src/kv-events/prompt-blocks';

const ENGINE = 'http://127.0.0.1:9001';
const BS = 4;

function batch(events: KvCacheEvent[], seq = 1n): KvEventBatch {
  return { topic: '', seq, timestampSeconds: 0, events };
}

function cached(index: EngineKvIndex, tokens: number[], model = 'm', complete = true): number | undefined {
  const account = index.accountOf(ENGINE, new PromptBlocks(tokens, complete), model);
  return account.known ? account.cachedTokens : undefined;
}

/** The plain model: every stored block as the whole token prefix up to its end, looked up by brute force. */
class ReferenceIndex {
  held = new Map<string, { tokens: number[]; lora: string | undefined }>();
  loras = new Set<string>();
  known = false;

  apply(event: KvCacheEvent): void {
    this.known = true;
    if (event.type === 'AllBlocksCleared') {
      this.held.clear();
      this.loras.clear();
    } else if (event.type === 'BlockRemoved') {
      for (const h of event.blockHashes) this.held.delete(h);
    } else {
      const parent = event.parentBlockHash === undefined ? undefined : this.held.get(event.parentBlockHash);
      if (event.parentBlockHash !== undefined && parent === undefined) return;
      if (event.loraName !== undefined) this.loras.add(event.loraName);
      const lora = parent === undefined ? event.loraName : parent.lora;
      event.blockHashes.forEach((h, i) => {
        const tokens = [...(parent?.tokens ?? []), ...event.tokenIds.slice(0, (i + 1) * BS)];
        this.held.set(h, { tokens, lora });
      });
    }
  }

  cached(tokens: number[], model: string): number | undefined {
    if (!this.known) return undefined;
    const lora = this.loras.has(model) ? model : undefined;
    const entries = [...this.held.values()].filter((e) => e.lora === lora);
    let blocks = 0;
    while (
      (blocks + 1) * BS <= tokens.length &&
      entries.some((e) => e.tokens.length === (blocks + 1) * BS && e.tokens.every((t, i) => t === tokens[i]))
    )
      blocks++;
    return Math.min(blocks * BS, Math.floor((tokens.length - 1) / BS) * BS);
  }
}

const token = fc.integer({ min: 0, max: 2 });
const op = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant('store' as const),
      parent: fc.nat(),
      blocks: fc.array(fc.array(token, { minLength: BS, maxLength: BS }), { minLength: 1, maxLength: 3 }),
      lora: fc.constantFrom(undefined, 'sql'),
    }),
    weight: 6,
  },
  { arbitrary: fc.record({ kind: fc.constant('remove' as const), pick: fc.nat() }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('clear' as const) }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant('query' as const),
      pick: fc.nat(),
      tail: fc.array(token, { maxLength: 9 }),
      model: fc.constantFrom('m', 'sql'),
    }),
    weight: 4,
  },
);

describe('EngineKvIndex', () => {
  test('GIVEN any stream of stores, removes and clears THEN each query answers like the plain reference model', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const index = new EngineKvIndex({ engines: [ENGINE], maxBlocksPerEngine: 10_000 });
        const reference = new ReferenceIndex();
        const hashes: string[] = [];
        let next = 0;
        for (const o of ops) {
          let event: KvCacheEvent | undefined;
          if (o.kind === 'store') {
            const blockHashes = o.blocks.map(() => `h${next++}`);
            const parent = o.parent % (hashes.length + 1);
            event = {
              type: 'BlockStored',
              blockHashes,
              ...(parent > 0 ? { parentBlockHash: hashes[parent - 1] } : {}),
              tokenIds: o.blocks.flat(),
              blockSize: BS,
              ...(o.lora !== undefined ? { loraName: o.lora } : {}),
            };
            hashes.push(...blockHashes);
          } else if (o.kind === 'remove' && hashes.length > 0) {
            event = { type: 'BlockRemoved', blockHashes: [hashes[o.pick % hashes.length]] };
          } else if (o.kind === 'clear') {
            event = { type: 'AllBlocksCleared' };
          } else if (o.kind === 'query') {
            const stored = [...reference.held.values()];
            const base = stored.length === 0 ? [] : stored[o.pick % stored.length].tokens;
            const tokens = [...base, ...o.tail];
            if (tokens.length > 0) expect(cached(index, tokens, o.model)).toBe(reference.cached(tokens, o.model));
          }
          if (event !== undefined) {
            index.applyBatch(ENGINE, batch([event]));
            reference.apply(event);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  test('GIVEN a publisher that only stores THEN the index never holds more than its bound, and forgets the oldest first', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 60 }), (bound, stores) => {
        const index = new EngineKvIndex({ engines: [ENGINE], maxBlocksPerEngine: bound });
        for (let i = 0; i < stores; i++)
          index.applyBatch(
            ENGINE,
            batch([{ type: 'BlockStored', blockHashes: [`h${i}`], tokenIds: [i, i, i, i], blockSize: BS }]),
          );
        expect(index.blocksOf(ENGINE)).toBe(Math.min(bound, stores));
        expect(index.counters.overflowDrops).toBe(Math.max(0, stores - bound));
        expect(cached(index, [stores - 1, stores - 1, stores - 1, stores - 1, 7])).toBe(4);
        if (stores > bound) expect(cached(index, [0, 0, 0, 0, 7])).toBe(0);
      }),
    );
  });

  describe('when an engine has sent nothing', () => {
    test('THEN its account is unknown (the caller keeps its estimate)', () => {
      const index = new EngineKvIndex({ engines: [ENGINE], maxBlocksPerEngine: 8 });
      expect(index.accountOf(ENGINE, new PromptBlocks([1, 2, 3, 4, 5], true), 'm')).toEqual({
        known: false,
        reason: 'no events yet',
      });
    });
  });

  describe('when batches were lost (markStale)', () => {
    const stored: KvCacheEvent = { type: 'BlockStored', blockHashes: ['a'], tokenIds: [1, 2, 3, 4], blockSize: BS };
    test('THEN the engine is unknown, later stores are ignored, until AllBlocksCleared starts it afresh', () => {
      const index = new EngineKvIndex({ engines: [ENGINE], maxBlocksPerEngine: 8 });
      index.applyBatch(ENGINE, batch([stored]));
      expect(cached(index, [1, 2, 3, 4, 5])).toBe(4);
      index.markStale(ENGINE, 'sequence gap 7..9 not replayable');
      expect(index.accountOf(ENGINE, new PromptBlocks([1, 2, 3, 4, 5], true), 'm')).toEqual({
        known: false,
        reason: 'sequence gap 7..9 not replayable',
      });
      index.applyBatch(ENGINE, batch([stored], 10n));
      expect(cached(index, [1, 2, 3, 4, 5])).toBeUndefined();
      index.applyBatch(ENGINE, batch([{ type: 'AllBlocksCleared' }, stored], 11n));
      expect(cached(index, [1, 2, 3, 4, 5])).toBe(4);
    });
    test('THEN a new stream (sequence 0: the engine restarted) starts it afresh too', () => {
      const index = new EngineKvIndex({ engines: [ENGINE], maxBlocksPerEngine: 8 });
      index.markStale(ENGINE, 'gap');
      index.applyBatch(ENGINE, batch([stored], 0n));
      expect(cached(index, [1, 2, 3, 4, 5])).toBe(4);
    });
  });

  describe('when blocks are not plain GPU blocks', () => {
    test('THEN a CPU tier, salted blocks and their children never count, and a wrong token count is counted and skipped', () => {
      const index = new EngineKvIndex({ engines: [ENGINE], maxBlocksPerEngine: 8 });
      index.applyBatch(
        ENGINE,
        batch([
          { type: 'BlockStored', blockHashes: ['cpu'], tokenIds: [1, 1, 1, 1], blockSize: BS, medium: 'CPU' },
          {
            type: 'BlockStored',
            blockHashes: ['s0', 's1'],
            tokenIds: [2, 2, 2, 2, 3, 3, 3, 3],
            blockSize: BS,
            extraKeys: [['salt'], null],
          },
          { type: 'BlockStored', blockHashes: ['bad'], tokenIds: [4, 4, 4], blockSize: BS },
          {
            type: 'BlockStored',
            blockHashes: ['l0'],
            tokenIds: [5, 5, 5, 5],
            blockSize: BS,
            loraName: 'sql',
            extraKeys: [['sql']],
          },
        ]),
      );
      expect(cached(index, [1, 1, 1, 1, 0])).toBe(0);
      expect(cached(index, [2, 2, 2, 2, 3, 3, 3, 3, 0])).toBe(0);
      expect(cached(index, [5, 5, 5, 5, 0], 'sql')).toBe(4);
      expect(cached(index, [5, 5, 5, 5, 0], 'm')).toBe(0);
      expect(index.counters).toMatchObject({ otherMediumEvents: 1, malformedEvents: 1 });
    });
    test('THEN a hybrid engine holds a prefix only as far as every KV cache group holds it', () => {
      const index = new EngineKvIndex({ engines: [ENGINE], maxBlocksPerEngine: 8 });
      const tokens = [1, 2, 3, 4, 5, 6, 7, 8];
      index.applyBatch(
        ENGINE,
        batch([
          { type: 'BlockStored', blockHashes: ['g0a', 'g0b'], tokenIds: tokens, blockSize: BS },
          { type: 'BlockStored', blockHashes: ['g1a'], tokenIds: tokens.slice(0, 4), blockSize: BS, groupIdx: 1 },
        ]),
      );
      expect(cached(index, [...tokens, 9])).toBe(4);
    });
  });

  test('GIVEN a batch for an engine not configured THEN it is counted and nothing is kept', () => {
    const index = new EngineKvIndex({ engines: [ENGINE], maxBlocksPerEngine: 8 });
    index.applyBatch('http://elsewhere', batch([{ type: 'AllBlocksCleared' }]));
    expect(index.counters.unknownEngineBatches).toBe(1);
    expect(index.blocksOf('http://elsewhere')).toBeUndefined();
  });

  test('GIVEN only a prefix of the prompt is known THEN every held block of it counts (the prompt goes on after it)', () => {
    const index = new EngineKvIndex({ engines: [ENGINE], maxBlocksPerEngine: 8 });
    index.applyBatch(
      ENGINE,
      batch([{ type: 'BlockStored', blockHashes: ['a'], tokenIds: [1, 2, 3, 4], blockSize: BS }]),
    );
    expect(cached(index, [1, 2, 3, 4], 'm', true)).toBe(0);
    expect(cached(index, [1, 2, 3, 4], 'm', false)).toBe(4);
  });
});
