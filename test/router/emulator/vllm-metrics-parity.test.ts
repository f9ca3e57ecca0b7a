/**
 * The emulator's /metrics against vLLM's own definitions.
 *
 * Reference: vllm-project/vllm, file vllm/v1/metrics/loggers.py, class PrometheusStatLogger, v0.11 line (the
 * revision whose comments say the gpu_* names are hidden from 0.11 and removed in 0.12; compared with the
 * earlier revision 005a810bc40faa25b8870fbc8559c3462581eee3 of the same file, which has every family below
 * except vllm:inter_token_latency_seconds). Names as the Python client prints them (counters get `_total`),
 * label names, and histogram bucket bounds; token-count buckets are build_1_2_5_buckets(max_model_len).
 * Families the emulator has no counterpart for (speculative decoding, LoRA, KV connectors, deprecated
 * gpu_* and time_per_output_token names, request_params_n/max_tokens, request_max_num_generation_tokens,
 * time_per_prefill_token) are not listed.
 */
import { buckets125 } from '../../../router/src/emulator/emulator-metrics';
import {
  EMULATED_VLLM_VERSION,
  startEmulator,
  type RunningEmulator,
} from '../../../router/src/emulator/emulator-server';
import { chatTemplate } from '../../../router/src/emulator/chat-template';
import { tokenCount } from '../../../router/src/state/block-hash';
import { textOf } from './engine-text';

const MODEL_LABELS = ['engine', 'model_name'];
const TTFT = [
  0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0,
  640.0, 2560.0,
];
const ITL = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0];
const REQUEST_LATENCY = [
  0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0,
  7680.0,
];
const ITERATION_TOKENS = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384];

interface Family {
  readonly type: 'counter' | 'gauge' | 'histogram';
  readonly labels: readonly string[];
  readonly buckets?: readonly number[];
}

function vllmFamilies(maxModelLen: number): Record<string, Family> {
  const tokens = buckets125(maxModelLen);
  return {
    'vllm:num_requests_running': { type: 'gauge', labels: MODEL_LABELS },
    'vllm:num_requests_waiting': { type: 'gauge', labels: MODEL_LABELS },
    'vllm:kv_cache_usage_perc': { type: 'gauge', labels: MODEL_LABELS },
    'vllm:prefix_cache_queries_total': { type: 'counter', labels: MODEL_LABELS },
    'vllm:prefix_cache_hits_total': { type: 'counter', labels: MODEL_LABELS },
    'vllm:num_preemptions_total': { type: 'counter', labels: MODEL_LABELS },
    'vllm:prompt_tokens_total': { type: 'counter', labels: MODEL_LABELS },
    'vllm:generation_tokens_total': { type: 'counter', labels: MODEL_LABELS },
    'vllm:request_success_total': { type: 'counter', labels: [...MODEL_LABELS, 'finished_reason'] },
    'vllm:request_prompt_tokens': { type: 'histogram', labels: MODEL_LABELS, buckets: tokens },
    'vllm:request_generation_tokens': { type: 'histogram', labels: MODEL_LABELS, buckets: tokens },
    'vllm:iteration_tokens_total': { type: 'histogram', labels: MODEL_LABELS, buckets: ITERATION_TOKENS },
    'vllm:time_to_first_token_seconds': { type: 'histogram', labels: MODEL_LABELS, buckets: TTFT },
    'vllm:inter_token_latency_seconds': { type: 'histogram', labels: MODEL_LABELS, buckets: ITL },
    'vllm:e2e_request_latency_seconds': { type: 'histogram', labels: MODEL_LABELS, buckets: REQUEST_LATENCY },
    'vllm:request_queue_time_seconds': { type: 'histogram', labels: MODEL_LABELS, buckets: REQUEST_LATENCY },
    'vllm:request_inference_time_seconds': { type: 'histogram', labels: MODEL_LABELS, buckets: REQUEST_LATENCY },
    'vllm:request_prefill_time_seconds': { type: 'histogram', labels: MODEL_LABELS, buckets: REQUEST_LATENCY },
    'vllm:request_decode_time_seconds': { type: 'histogram', labels: MODEL_LABELS, buckets: REQUEST_LATENCY },
    // CacheConfig.metrics_info() labels (every cache config field in vLLM; these are the ones we model) + engine.
    'vllm:cache_config_info': {
      type: 'gauge',
      labels: ['block_size', 'enable_prefix_caching', 'engine', 'num_gpu_blocks'],
    },
  };
}

interface Sample {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly value: number;
}

function parseExposition(text: string): { types: Map<string, string>; samples: Sample[] } {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) types.set(type[1], type[2]);
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([^{\s]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`unparseable metrics line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (m[2] ?? '').match(/[a-z_]+="[^"]*"/g) ?? []) {
      const eq = pair.indexOf('=');
      labels[pair.slice(0, eq)] = pair.slice(eq + 2, -1);
    }
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return { types, samples };
}

describe('emulator metrics parity with vLLM', () => {
  let emulator: RunningEmulator;

  beforeAll(async () => {
    emulator = await startEmulator({ profile: 'tiny', timeScale: 50, port: 0 });
  });

  afterAll(async () => {
    await emulator.close();
  });

  async function scrape(): Promise<ReturnType<typeof parseExposition>> {
    return parseExposition(await (await fetch(`${emulator.url}/metrics`)).text());
  }

  test('GIVEN a fresh emulator THEN every vLLM family exists with vLLM\u2019s type, label names and buckets, and no other vllm: family', async () => {
    const families = vllmFamilies(emulator.profile.maxModelLen);
    const { types, samples } = await scrape();
    const exported = [...types.keys()].filter((n) => n.startsWith('vllm:')).sort();
    expect(exported).toEqual(Object.keys(families).sort());
    for (const [name, family] of Object.entries(families)) {
      expect({ name, type: types.get(name) }).toEqual({ name, type: family.type });
      const own = samples.filter(
        (s) =>
          s.name === name ||
          (family.type === 'histogram' && [`${name}_bucket`, `${name}_sum`, `${name}_count`].includes(s.name)),
      );
      expect(own.length).toBeGreaterThan(0);
      for (const s of own) {
        const labelNames = Object.keys(s.labels)
          .filter((l) => l !== 'le')
          .sort();
        expect({ name, labelNames }).toEqual({ name, labelNames: [...family.labels].sort() });
      }
      if (family.buckets) {
        const bounds = own.filter((s) => s.name === `${name}_bucket`).map((s) => s.labels.le);
        expect({ name, bounds }).toEqual({ name, bounds: [...family.buckets.map(String), '+Inf'] });
      }
    }
    expect(buckets125(100)).toEqual([1, 2, 5, 10, 20, 50, 100]);
    const info = samples.find((s) => s.name === 'vllm:cache_config_info');
    expect(info).toMatchObject({
      value: 1,
      labels: {
        block_size: '16',
        num_gpu_blocks: String(emulator.profile.kvCapacityBlocks),
        enable_prefix_caching: 'True',
      },
    });
    const reasons = samples
      .filter((s) => s.name === 'vllm:request_success_total')
      .map((s) => s.labels.finished_reason)
      .sort();
    expect(reasons).toEqual(['abort', 'length', 'stop']);
  });

  test('GIVEN a streamed request THEN its phases, tokens and steps are observed as vLLM does', async () => {
    const before = await scrape();
    const response = await fetch(`${emulator.url}/v1/completions`, {
      method: 'POST',
      body: JSON.stringify({ prompt: textOf('parity', 200), max_tokens: 7, stream: true }),
    });
    await response.text();
    const after = await scrape();
    const value = (s: ReturnType<typeof parseExposition>, name: string, labels: Record<string, string> = {}): number =>
      s.samples
        .filter((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v))
        .reduce((sum, x) => sum + x.value, 0);
    const delta = (name: string, labels: Record<string, string> = {}): number =>
      value(after, name, labels) - value(before, name, labels);
    for (const h of [
      'time_to_first_token_seconds',
      'e2e_request_latency_seconds',
      'request_queue_time_seconds',
      'request_prefill_time_seconds',
      'request_decode_time_seconds',
      'request_inference_time_seconds',
      'request_prompt_tokens',
      'request_generation_tokens',
    ]) {
      expect({ h, count: delta(`vllm:${h}_count`) }).toEqual({ h, count: 1 });
    }
    // Six gaps between seven tokens.
    expect(delta('vllm:inter_token_latency_seconds_count')).toBe(6);
    expect(delta('vllm:request_prompt_tokens_sum')).toBe(200);
    expect(delta('vllm:request_generation_tokens_sum')).toBe(7);
    expect(delta('vllm:request_success_total', { finished_reason: 'length' })).toBe(1);
    // Every step is observed; together they scheduled the prompt and the six decode tokens after the first.
    expect(delta('vllm:iteration_tokens_total_sum')).toBe(200 + 6);
    // e2e = prefill + decode + queue (virtual seconds, exact up to float rounding).
    const phases =
      delta('vllm:request_queue_time_seconds_sum') +
      delta('vllm:request_prefill_time_seconds_sum') +
      delta('vllm:request_decode_time_seconds_sum');
    expect(phases).toBeCloseTo(delta('vllm:e2e_request_latency_seconds_sum'), 9);
  });

  test('GIVEN a client that goes away THEN the request counts as finished_reason="abort"', async () => {
    const slow = await startEmulator({ profile: 'tiny', timeScale: 1 });
    try {
      const controller = new AbortController();
      const response = await fetch(`${slow.url}/v1/completions`, {
        method: 'POST',
        body: JSON.stringify({ prompt: textOf('gone', 300), max_tokens: 600, stream: true }),
        signal: controller.signal,
      });
      await (response.body as ReadableStream<Uint8Array>).getReader().read();
      controller.abort();
      for (let i = 0; i < 200 && slow.engine.stats().aborted === 0; i++) await new Promise((r) => setTimeout(r, 10));
      const text = await (await fetch(`${slow.url}/metrics`)).text();
      expect(text).toMatch(/^vllm:request_success_total\{[^}]*finished_reason="abort"[^}]*\} 1$/m);
    } finally {
      await slow.close();
    }
  });
});

describe('emulator endpoints vLLM serves besides completions', () => {
  let emulator: RunningEmulator;

  beforeAll(async () => {
    emulator = await startEmulator({ profile: 'tiny', timeScale: 50, port: 0 });
  });

  afterAll(async () => {
    await emulator.close();
  });

  const post = (path: string, body: unknown): Promise<Response> =>
    fetch(`${emulator.url}${path}`, { method: 'POST', body: JSON.stringify(body) });

  test('GIVEN POST /ping (SageMaker health check) THEN 200 like GET', async () => {
    expect((await fetch(`${emulator.url}/ping`, { method: 'POST' })).status).toBe(200);
    expect((await fetch(`${emulator.url}/ping`)).status).toBe(200);
  });

  test('GIVEN GET /version THEN the vLLM version whose API the emulator follows', async () => {
    expect(await (await fetch(`${emulator.url}/version`)).json()).toEqual({ version: EMULATED_VLLM_VERSION });
  });

  test('GIVEN /tokenize with a prompt or messages THEN the count is what the engine charges, and /detokenize gives the text back', async () => {
    const prompt = 'Hello, wörld! ' + textOf('tok', 30);
    const byPrompt = (await (await post('/tokenize', { prompt })).json()) as {
      count: number;
      max_model_len: number;
      tokens: number[];
    };
    expect(byPrompt.count).toBe(tokenCount(prompt));
    expect(byPrompt.tokens).toHaveLength(byPrompt.count);
    expect(byPrompt.max_model_len).toBe(1024);
    expect(await (await post('/detokenize', { tokens: byPrompt.tokens })).json()).toEqual({ prompt });

    const messages = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
    ];
    const byMessages = (await (await post('/tokenize', { messages })).json()) as { count: number };
    expect(byMessages.count).toBe(tokenCount(chatTemplate(messages)));
    const noPrompt = (await (await post('/tokenize', { messages, add_generation_prompt: false })).json()) as {
      count: number;
    };
    expect(noPrompt.count).toBe(tokenCount(chatTemplate(messages, { addGenerationPrompt: false })));
  });

  test('GIVEN bad tokenize input THEN 400 naming the field; unknown model 404; GET 405', async () => {
    expect((await post('/tokenize', { prompt: 3 })).status).toBe(400);
    const unknown = await post('/detokenize', { tokens: [2 ** 28 + 999_999] });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toMatch(
      /token id 269435455 is not in this emulator's vocabulary/,
    );
    expect((await post('/detokenize', { tokens: [-1] })).status).toBe(400);
    expect((await post('/tokenize', { model: 'other', prompt: 'x' })).status).toBe(404);
    expect((await fetch(`${emulator.url}/tokenize`)).status).toBe(405);
  });
});
