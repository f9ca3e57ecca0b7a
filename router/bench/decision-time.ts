/**
 * Decision time of the cache-aware policy with 1,000,000 vs 1,000 indexed blocks, measured side by side in one
 * process, and the process's RSS with the large index loaded (after a full GC when run with --expose-gc).
 * Prints one JSON line. Run by `npm run bench:policies` in a child process of its own, so the simulations'
 * memory does not count:   node --expose-gc dist/router/bench/decision-time.js
 *
 * Also, side by side: the same decisions when each instance's published index is observed as well (router
 * replicas with --observe-instances on), and what publishing costs the instance's router per request (hashing the
 * routing text and recording its blocks, --publish-state-ms).
 *
 * And, side by side, what keying the routing block hashes costs (issue 24): the keyed chain every decision now
 * hashes (64-bit HMAC-SHA256 tags, StateHashKey.blockKeys) against the unkeyed 32-bit chain it replaced
 * (unkeyedChain below, kept here only as the reference), over the same prompts.
 */
import { SeededRng } from '../src/common/seeded-rng';
import { CacheAwarePolicy, createPolicy, type InstanceView } from '../src/policy';
import type { RoutingRequest } from '../src/protocol/routing-request';
import { routingBlockHashes } from '../src/policy/routing-blocks';
import { ObservedInstance } from '../src/state/instance-state-log';
import { ROUTER_DEFAULTS } from '../src/config/router-config';
import { DEFAULT_KV_CACHE_TOKENS } from '../src/state/prefix-index';
import { publishedStateLog } from '../src/core/routing-core';
import { hashUtf16Range } from '../src/policy/hashing';
import { StateHashKey } from '../src/state/state-hash-key';
import { median } from '../src/report/stats';

const KEY = StateHashKey.fromSecret('decision-time bench: a fixed state-hash key');

/** The routing block chain before issue 24 (unkeyed, 32-bit, seeded by a public value): the cost reference. */
function unkeyedChain(text: string, blockChars: number, seed: number): Int32Array {
  const count = Math.floor(text.length / blockChars);
  const hashes = new Int32Array(count);
  for (let i = 0; i < count; i++) {
    seed = hashUtf16Range(text, i * blockChars, (i + 1) * blockChars, seed);
    hashes[i] = seed | 0;
  }
  return hashes;
}

const INSTANCES = 7;
const PROMPT_CHARS = 32_768; // 128 routing blocks of 256 characters
const ids = Array.from({ length: INSTANCES }, (_, i) => `http://10.0.0.${i + 1}:8000`);
const views: InstanceView[] = ids.map((id) => ({
  id,
  healthy: true,
  inFlight: 0,
  queuedPrefillTokens: 0,
  decodeSequences: 0,
}));

// One random base text; a prompt is a distinct label followed by a window of it, so every prompt's chain differs.
const rng = new SeededRng(11);
const alphabet = 'abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ.,0123456789';
let base = '';
for (let i = 0; i < 200_000; i++) base += alphabet[Math.floor(rng.next() * alphabet.length)];

function request(label: string, offset: number, chars = PROMPT_CHARS): RoutingRequest {
  return {
    model: 'm',
    api: 'chat',
    keyBasis: 'message-text',
    routingText: `${label}|${base.slice(offset, offset + chars)}`,
    stream: false,
  };
}

function route(policy: CacheAwarePolicy, r: RoutingRequest, instances: readonly InstanceView[] = views): void {
  const d = policy.decide(r, { instances, nowMs: 0 });
  policy.commit(r, d);
  policy.release(r, d, { kind: 'completed' });
}

function filled(blocks: number): CacheAwarePolicy {
  const perInstance = Math.ceil(blocks / INSTANCES);
  // Capacity per instance = kvCacheTokens × 4 / 256 blocks: sized so the index holds `blocks` in all.
  const policy = createPolicy(
    { name: 'cache-aware', kvCacheTokens: Math.max(1024, Math.ceil((perInstance * 256) / 4)) },
    { rng: new SeededRng(1), stateHashKey: KEY },
  ) as CacheAwarePolicy;
  for (let n = 0; policy.index.totalBlocks < blocks && n < blocks; n++)
    route(policy, request(`fill-${n}`, n % 100_000));
  return policy;
}

const small = filled(1_000);
const large = filled(1_000_000);
(globalThis as { gc?: () => void }).gc?.();
const rssMb = process.memoryUsage().rss / 2 ** 20;

// Probes: prompts that share long prefixes with earlier probes (a realistic mix of hits and misses).
const probes = Array.from({ length: 400 }, (_, i) =>
  request(`probe-${i % 40}`, 150_000, PROMPT_CHARS + (i % 10) * 1024),
);
function time(policy: CacheAwarePolicy, instances: readonly InstanceView[] = views): number {
  const t0 = process.hrtime.bigint();
  for (const r of probes) route(policy, r, instances);
  return Number(process.hrtime.bigint() - t0) / 1000 / probes.length;
}

// Each instance's published index at the default size (1,000,000 tokens = 15,625 blocks), filled with other prompts.
const BLOCK_CHARS = ROUTER_DEFAULTS.publishStateBlockChars;
const published = ids.map((id) => publishedStateLog(BLOCK_CHARS, DEFAULT_KV_CACHE_TOKENS, KEY, id));
for (let n = 0; n < 1_000; n++)
  published[n % INSTANCES]
    .admit(routingBlockHashes(request(`published-${n}`, (n * 97) % 100_000), BLOCK_CHARS, KEY), 8192)
    .end();
const observedViews: InstanceView[] = views.map((v, i) => {
  const observed = new ObservedInstance();
  observed.apply(published[i].updateSince(undefined, undefined), 0);
  return { ...v, observedBlocks: observed };
});
const observing = filled(1_000);
const blind = filled(1_000);
function timePublishing(): number {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < probes.length; i++)
    published[i % INSTANCES].admit(routingBlockHashes(probes[i], BLOCK_CHARS, KEY), 8192).end();
  return Number(process.hrtime.bigint() - t0) / 1000 / probes.length;
}

let keyedBlocks = 0;
let unkeyedBlocks = 0;
function timeHashing(keyed: boolean): number {
  const t0 = process.hrtime.bigint();
  for (const r of probes) {
    if (keyed) keyedBlocks += routingBlockHashes(r, BLOCK_CHARS, KEY).length;
    else unkeyedBlocks += unkeyedChain(r.routingText, BLOCK_CHARS, 0x3c6ef372).length;
  }
  return Number(process.hrtime.bigint() - t0) / 1000 / probes.length;
}

time(small);
time(large);
timeHashing(true);
timeHashing(false);
time(observing, observedViews);
time(blind);
timePublishing();
const smallUs: number[] = [];
const largeUs: number[] = [];
const observingUs: number[] = [];
const blindUs: number[] = [];
const publishUs: number[] = [];
const keyedUs: number[] = [];
const unkeyedUs: number[] = [];
for (let round = 0; round < 9; round++) {
  keyedUs.push(timeHashing(true));
  unkeyedUs.push(timeHashing(false));
  smallUs.push(time(small));
  largeUs.push(time(large));
  observingUs.push(time(observing, observedViews));
  blindUs.push(time(blind));
  publishUs.push(timePublishing());
}
process.stdout.write(
  `${JSON.stringify({
    smallBlocks: small.index.totalBlocks,
    largeBlocks: large.index.totalBlocks,
    smallMicros: median(smallUs),
    largeMicros: median(largeUs),
    ratio: median(largeUs) / median(smallUs),
    rssMb,
    observingMicros: median(observingUs),
    blindMicros: median(blindUs),
    observedBlocks: observedViews.reduce((n, v) => n + (v.observedBlocks?.size ?? 0), 0),
    publishMicros: median(publishUs),
    keyedHashMicros: median(keyedUs),
    unkeyedHashMicros: median(unkeyedUs),
    hashBlocks: keyedBlocks / (probes.length * 10),
    sameBlockCounts: keyedBlocks === unkeyedBlocks,
    gc: typeof (globalThis as { gc?: unknown }).gc === 'function',
  })}\n`,
);
