import fc from 'fast-check';
import { PromptHasher } from '../../../router/src/sim/prompt-hasher';
import { inlinePromptSource } from '../../../router/src/sim/prompt-source';
import type * as PromptWorker from '../../../router/src/sim/prompt-worker';
import { renderedPromptOf } from '../../../router/src/feed/workload-routing';
import { parseWorkloadSpec } from '../../../router/src/workload';
import type { WorkloadRequest } from '../../../router/src/workload/workload-request';
import { blockHashes, blockHashesAfter, tokenCount } from '../../../router/src/state/block-hash';
import { compiledModule } from '../../compiled-dist';

/** From dist/: the worker thread then loads JavaScript instead of compiling the hashing modules under ts-node. */
const { startPromptWorker } = compiledModule<typeof PromptWorker>('router/src/sim/prompt-worker');

const reference = (request: WorkloadRequest, blockTokens: number) => {
  const text = renderedPromptOf(request);
  return { hashes: blockHashes(text, { blockTokens }), promptTokens: tokenCount(text) };
};

describe('PromptHasher', () => {
  test('GIVEN requests sharing heads WHEN hashed with the memo THEN every hash equals hashing the whole rendered prompt', () => {
    const text = fc.string({ minLength: 0, maxLength: 400 });
    fc.assert(
      fc.property(
        fc.array(fc.record({ head: fc.integer({ min: 0, max: 3 }), own: text, chat: fc.boolean() }), {
          minLength: 1,
          maxLength: 12,
        }),
        fc.array(text, { minLength: 4, maxLength: 4 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 3000 }),
        (specs, heads, blockTokens, memoBlocks) => {
          const hasher = new PromptHasher(blockTokens, memoBlocks);
          specs.forEach((s, i) => {
            const base = { index: i, id: `r${i}`, arrivalMs: i, maxTokens: 1 };
            const key = `head/${s.head}/${s.chat}`;
            const request: WorkloadRequest = s.chat
              ? {
                  ...base,
                  kind: 'chat',
                  messages: [
                    { role: 'system', content: heads[s.head] },
                    { role: 'user', content: s.own },
                  ],
                  sharedHead: { key, length: 1 },
                }
              : {
                  ...base,
                  kind: 'completion',
                  prompt: heads[s.head] + s.own,
                  sharedHead: { key, length: heads[s.head].length },
                };
            const got = hasher.blocksOf(request);
            const want = reference(request, blockTokens);
            expect(Array.from(got.hashes)).toEqual(want.hashes);
            expect(got.promptTokens).toBe(want.promptTokens);
          });
        },
      ),
    );
  });

  test('GIVEN a memo budget of one head WHEN two heads alternate THEN it holds one and the hashes stay exact', () => {
    const workload = parseWorkloadSpec('long-context?groups=2&prefixTokens=200&suffixTokens=10..20&count=20&rate=10');
    const hasher = new PromptHasher(16, 20); // a head is 13 blocks
    for (const request of workload.requests()) {
      expect(Array.from(hasher.blocksOf(request).hashes)).toEqual(reference(request, 16).hashes);
      expect(hasher.memoSize).toBeLessThanOrEqual(1);
    }
  });

  test('GIVEN a head longer than the request WHEN hashed THEN the error names sharedHead.length and the range', () => {
    const request: WorkloadRequest = {
      index: 0,
      id: 'r0',
      arrivalMs: 0,
      maxTokens: 1,
      kind: 'chat',
      messages: [{ role: 'user', content: 'hi' }],
      sharedHead: { key: 'k', length: 2 },
    };
    expect(() => new PromptHasher(16).blocksOf(request)).toThrow(
      'request r0: sharedHead.length must be an integer between 0 and 1 (got 2)',
    );
  });

  test('blockHashesAfter rejects more known blocks than the text has', () => {
    expect(() => blockHashesAfter('x'.repeat(64), [1, 2], { blockTokens: 16 })).toThrow(
      '2 known blocks but the text has 1 full blocks',
    );
  });
});

describe('when a worker thread prepares the requests', () => {
  const settings = { blockTokens: 16, model: 'm' };

  test('GIVEN long-context and shared-system workloads THEN it yields the same prepared requests as the inline source', () => {
    for (const spec of [
      'long-context?groups=5&prefixTokens=500&suffixTokens=10..90&count=150&rate=50&seed=3',
      'shared-system?groups=3&promptsPerGroup=40&systemTokens=300&api=completion',
    ]) {
      const workload = parseWorkloadSpec(spec);
      const inline = [...inlinePromptSource(workload, settings).requests];
      const worker = startPromptWorker(workload, settings);
      const fromWorker = [...worker.requests];
      expect(fromWorker).toEqual(inline);
      // and the hashes are those of the whole rendered prompt
      const requests = [...workload.requests()];
      inline.forEach((prepared, i) => expect(Array.from(prepared.hashes)).toEqual(reference(requests[i], 16).hashes));
      worker.close();
    }
  }, 30_000);

  test('GIVEN a run that stops early WHEN the source is closed THEN the worker stops and iterating again is refused', () => {
    const worker = startPromptWorker(
      parseWorkloadSpec('long-context?groups=5&prefixTokens=100&count=100000&rate=100'),
      settings,
    );
    const iterator = worker.requests[Symbol.iterator]();
    expect(iterator.next().done).toBe(false);
    iterator.return?.();
    worker.close();
    expect(() => worker.requests[Symbol.iterator]()).toThrow('a worker prompt source can be iterated once');
  }, 30_000);
});
