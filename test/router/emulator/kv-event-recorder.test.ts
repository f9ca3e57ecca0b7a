import { EngineModel } from '../../../router/src/emulator/engine-model';
import { builtinProfile } from '../../../router/src/emulator/engine-profile';
import { EmulatorTokenizer } from '../../../router/src/emulator/emulator-tokens';
import { emulatorBlockTokenIds, KvEventRecorder } from '../../../router/src/emulator/kv-event-recorder';
import type { BlockStoredEvent, KvCacheEvent } from '../../../router/src/kv-events/kv-event';
import { blockHashes } from '../../../router/src/state/block-hash';
import { textOf } from './engine-text';

function engineWithRecorder(): { engine: EngineModel; batches: KvCacheEvent[][]; tokenizer: EmulatorTokenizer } {
  const batches: KvCacheEvent[][] = [];
  const tokenizer = new EmulatorTokenizer();
  const recorder = new KvEventRecorder(emulatorBlockTokenIds(tokenizer, 16), 16, (events) => batches.push([...events]));
  const engine = new EngineModel(builtinProfile('tiny'), {
    tokenEvents: true,
    cacheListener: recorder,
    onStep: () => recorder.flush(),
  });
  return { engine, batches, tokenizer };
}

describe('KV event recorder', () => {
  test('GIVEN one prompt of 3 full blocks THEN one step publishes one BlockStored chaining them, with the /tokenize ids', () => {
    const { engine, batches, tokenizer } = engineWithRecorder();
    const prompt = textOf('a', 50);
    engine.submit({ id: 'a', promptText: prompt, maxTokens: 1 }, 0);
    engine.drain();
    const stored = batches.flat().filter((e): e is BlockStoredEvent => e.type === 'BlockStored');
    expect(stored).toHaveLength(1);
    expect(stored[0]).toEqual({
      type: 'BlockStored',
      blockHashes: blockHashes(prompt).map(String),
      tokenIds: tokenizer.tokenize(prompt).slice(0, 48),
      blockSize: 16,
      medium: 'GPU',
    });
  });

  test('GIVEN a continuation of a cached prompt THEN its new blocks name the cached block as parent', () => {
    const { engine, batches } = engineWithRecorder();
    const first = textOf('b', 40);
    engine.submit({ id: 'first', promptText: first, maxTokens: 1 }, 0);
    engine.drain();
    batches.length = 0;
    engine.submit({ id: 'second', promptText: first + textOf('c', 40), maxTokens: 1 }, 1000);
    engine.drain();
    const stored = batches.flat().find((e): e is BlockStoredEvent => e.type === 'BlockStored');
    expect(stored?.parentBlockHash).toBe(String(blockHashes(first)[1]));
  });

  test('GIVEN a LoRA adapter and a cache_salt THEN every block carries the adapter and only the first the salt', () => {
    const { engine, batches } = engineWithRecorder();
    engine.submit({ id: 'a', promptText: textOf('d', 40), maxTokens: 1, loraName: 'sql', cacheSalt: 's1' }, 0);
    engine.drain();
    const stored = batches.flat().find((e): e is BlockStoredEvent => e.type === 'BlockStored');
    expect(stored).toMatchObject({ loraName: 'sql', extraKeys: [['sql', 's1'], ['sql']] });
  });

  test('GIVEN a full cache THEN evicted blocks are published as BlockRemoved in the step that evicted them', () => {
    const { engine, batches } = engineWithRecorder();
    for (let i = 0; i < 6; i++)
      engine.submit({ id: `r${i}`, promptText: textOf(`e${i}`, 400), maxTokens: 1 }, i * 1000);
    engine.drain();
    const removed = batches.flat().filter((e) => e.type === 'BlockRemoved');
    expect(engine.stats().evictedBlocks).toBeGreaterThan(0);
    expect(removed.length).toBe(engine.stats().evictedBlocks);
    for (const batch of batches) expect(batch.length).toBeGreaterThan(0);
  });
});
