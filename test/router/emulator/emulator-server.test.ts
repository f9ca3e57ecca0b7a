import OpenAI from 'openai';
import { blockHashes, tokenCount } from '../../../router/src/state/block-hash';
import { chatTemplate } from '../../../router/src/emulator/chat-template';
import { outputText } from '../../../router/src/emulator/output-text';
import {
  resolveEmulatorOptions,
  startEmulator,
  startEmulatorFleet,
  type RunningEmulator,
} from '../../../router/src/emulator/emulator-server';
import { textOf } from './engine-text';

/** Tokens a repeat of this prompt gets from the cache: leading full blocks, never the last token. */
function expectedHit(promptText: string): number {
  return Math.min(blockHashes(promptText).length, Math.floor((tokenCount(promptText) - 1) / 16)) * 16;
}

/** Prometheus text → { 'name{labels}': value } for sample lines. */
function parseMetrics(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^(\S+?(?:\{[^}]*\})?) (\S+)$/.exec(line);
    if (!match) throw new Error(`unparseable metrics line: ${line}`);
    samples.set(match[1], Number(match[2]));
  }
  return samples;
}

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (condition()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('emulator server', () => {
  let emulator: RunningEmulator;
  let client: OpenAI;
  const labels = '{model_name="tiny-emulated-model",engine="0"}';

  beforeAll(async () => {
    emulator = await startEmulator({ profile: 'tiny', timeScale: 50, port: 0 });
    client = new OpenAI({ baseURL: `${emulator.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });

  afterAll(async () => {
    await emulator.close();
  });

  describe('when called with the official openai client', () => {
    test('GIVEN a non-streaming chat request THEN it answers max_tokens filler tokens with usage and cached_tokens', async () => {
      const messages = [{ role: 'user' as const, content: textOf('chat-once', 40) }];
      const answer = await client.chat.completions.create({ model: 'tiny-emulated-model', messages, max_tokens: 5 });
      expect(answer.object).toBe('chat.completion');
      expect(answer.choices[0]).toMatchObject({
        message: { role: 'assistant', content: outputText(5) },
        finish_reason: 'length',
      });
      expect(answer.usage).toEqual({
        prompt_tokens: tokenCount(chatTemplate(messages)),
        completion_tokens: 5,
        total_tokens: tokenCount(chatTemplate(messages)) + 5,
        prompt_tokens_details: { cached_tokens: 0 },
      });
    });

    test('GIVEN a streaming chat request with include_usage THEN tokens arrive as chunks, then usage, then the stream ends', async () => {
      const messages = [{ role: 'user' as const, content: textOf('streamed', 50) }];
      const stream = await client.chat.completions.create({
        model: 'tiny-emulated-model',
        messages,
        max_tokens: 7,
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      let role: string | undefined;
      let finish: string | null = null;
      let usage: OpenAI.CompletionUsage | null | undefined;
      let contentChunks = 0;
      for await (const chunk of stream) {
        if (chunk.choices.length > 0) {
          const { delta, finish_reason } = chunk.choices[0];
          role ??= delta.role;
          if (delta.content) {
            text += delta.content;
            contentChunks++;
          }
          finish = finish_reason ?? finish;
        } else {
          usage = chunk.usage;
        }
      }
      expect(role).toBe('assistant');
      expect(text).toBe(outputText(7));
      expect(contentChunks).toBe(7);
      expect(finish).toBe('length');
      expect(usage).toMatchObject({
        prompt_tokens: tokenCount(chatTemplate(messages)),
        completion_tokens: 7,
        prompt_tokens_details: { cached_tokens: 0 },
      });
    });

    test('GIVEN the same conversation twice THEN the second reports its cached prefix in cached_tokens', async () => {
      const messages = [
        { role: 'system' as const, content: textOf('system', 200) },
        { role: 'user' as const, content: 'What now?' },
      ];
      const first = await client.chat.completions.create({ model: 'tiny-emulated-model', messages, max_tokens: 2 });
      const second = await client.chat.completions.create({ model: 'tiny-emulated-model', messages, max_tokens: 2 });
      expect(first.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
      expect(second.usage?.prompt_tokens_details?.cached_tokens).toBe(expectedHit(chatTemplate(messages)));
      expect(second.usage?.prompt_tokens_details?.cached_tokens).toBeGreaterThan(200);
    });

    test("GIVEN cache_salt THEN cached blocks are shared only among requests with the same salt (vLLM's rule)", async () => {
      const messages = [
        { role: 'system' as const, content: textOf('salted system', 200) },
        { role: 'user' as const, content: 'What now?' },
      ];
      // cache_salt is a vLLM extension, not in the openai SDK's types: sent as an extra body field.
      const send = (salt: string) =>
        client.chat.completions.create({
          model: 'tiny-emulated-model',
          messages,
          max_tokens: 2,
          cache_salt: salt,
        } as OpenAI.ChatCompletionCreateParamsNonStreaming);
      expect((await send('tenant-a')).usage?.prompt_tokens_details?.cached_tokens).toBe(0);
      // WHEN another salt sends the same prompt THEN nothing is cached for it
      expect((await send('tenant-b')).usage?.prompt_tokens_details?.cached_tokens).toBe(0);
      // AND the first salt's repeat hits its own blocks
      expect((await send('tenant-a')).usage?.prompt_tokens_details?.cached_tokens).toBe(
        expectedHit(chatTemplate(messages)),
      );
      await expect(
        client.chat.completions.create({
          model: 'tiny-emulated-model',
          messages,
          max_tokens: 2,
          cache_salt: '',
        } as OpenAI.ChatCompletionCreateParamsNonStreaming),
      ).rejects.toMatchObject({ status: 400 });
    });

    test('GIVEN completions, streaming and not THEN both return the filler text and usage', async () => {
      const prompt = textOf('completion', 64);
      const plain = await client.completions.create({ model: 'tiny-emulated-model', prompt, max_tokens: 3 });
      expect(plain.choices[0]).toMatchObject({ text: outputText(3), finish_reason: 'length' });
      expect(plain.usage).toMatchObject({ prompt_tokens: 64, completion_tokens: 3 });
      const stream = await client.completions.create({
        model: 'tiny-emulated-model',
        prompt,
        max_tokens: 4,
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const chunk of stream) {
        if (chunk.choices.length > 0) text += chunk.choices[0].text;
        if (chunk.usage) usage = chunk.usage;
      }
      expect(text).toBe(outputText(4));
      expect(usage).toMatchObject({
        prompt_tokens: 64,
        completion_tokens: 4,
        prompt_tokens_details: { cached_tokens: 48 },
      });
    });

    test('GIVEN /v1/models THEN it lists the served model with its context length', async () => {
      const models = await client.models.list();
      expect(models.data.map((m) => m.id)).toEqual(['tiny-emulated-model']);
      expect((models.data[0] as unknown as { max_model_len: number }).max_model_len).toBe(1024);
    });
  });

  describe('when called with SageMaker and health routes', () => {
    test.each(['/health', '/ping'])('GIVEN GET %s THEN 200', async (path) => {
      expect((await fetch(`${emulator.url}${path}`)).status).toBe(200);
    });

    test('GIVEN /invocations with messages or prompt THEN the body shape picks chat or completion', async () => {
      const chat = await fetch(`${emulator.url}/invocations`, {
        method: 'POST',
        body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }),
      });
      expect(await chat.json()).toMatchObject({
        object: 'chat.completion',
        choices: [{ message: { content: outputText(2) } }],
      });
      const completion = await fetch(`${emulator.url}/invocations`, {
        method: 'POST',
        body: JSON.stringify({ prompt: 'hello', max_tokens: 2 }),
      });
      expect(await completion.json()).toMatchObject({ object: 'text_completion', choices: [{ text: outputText(2) }] });
    });
  });

  describe('when /metrics is scraped', () => {
    test('GIVEN a request THEN vLLM-named counters, gauges and histograms parse and move by its tokens', async () => {
      const before = parseMetrics(await (await fetch(`${emulator.url}/metrics`)).text());
      const prompt = textOf('metrics', 100);
      await client.completions.create({ model: 'tiny-emulated-model', prompt, max_tokens: 6 });
      const response = await fetch(`${emulator.url}/metrics`);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
      const text = await response.text();
      for (const [name, type] of [
        ['vllm:prefix_cache_queries_total', 'counter'],
        ['vllm:prefix_cache_hits_total', 'counter'],
        ['vllm:prompt_tokens_total', 'counter'],
        ['vllm:generation_tokens_total', 'counter'],
        ['vllm:num_requests_running', 'gauge'],
        ['vllm:num_requests_waiting', 'gauge'],
        ['vllm:kv_cache_usage_perc', 'gauge'],
        ['vllm:time_to_first_token_seconds', 'histogram'],
        ['vllm:e2e_request_latency_seconds', 'histogram'],
      ]) {
        expect(text).toContain(`# TYPE ${name} ${type}`);
      }
      const after = parseMetrics(text);
      const delta = (name: string): number =>
        (after.get(`${name}${labels}`) ?? NaN) - (before.get(`${name}${labels}`) ?? 0);
      expect(delta('vllm:prefix_cache_queries_total')).toBe(100);
      expect(delta('vllm:prompt_tokens_total')).toBe(100);
      expect(delta('vllm:generation_tokens_total')).toBe(6);
      expect(delta('vllm:time_to_first_token_seconds_count')).toBe(1);
      expect(delta('vllm:e2e_request_latency_seconds_count')).toBe(1);
      expect(after.get(`vllm:num_requests_running${labels}`)).toBe(0);
      expect(after.get(`vllm:kv_cache_usage_perc${labels}`)).toBe(0);
    });
  });

  describe('when the client goes away', () => {
    test('GIVEN a long streaming request WHEN the client aborts after the first token THEN the engine drops it and frees its blocks', async () => {
      const slow = await startEmulator({ profile: 'tiny', timeScale: 1 });
      try {
        const controller = new AbortController();
        const response = await fetch(`${slow.url}/v1/completions`, {
          method: 'POST',
          body: JSON.stringify({ prompt: textOf('abort', 300), max_tokens: 600, stream: true }),
          signal: controller.signal,
        });
        const reader = (response.body as ReadableStream<Uint8Array>).getReader();
        expect((await reader.read()).done).toBe(false);
        expect(slow.engine.stats().running).toBe(1);
        controller.abort();
        await waitFor(() => slow.engine.stats().aborted === 1, 'the engine to see the abort');
        expect(slow.engine.stats()).toMatchObject({ running: 0, waiting: 0, usedBlocks: 0, finished: 0 });
      } finally {
        await slow.close();
      }
    });
  });

  describe('when the input is bad', () => {
    const post = async (
      path: string,
      body: string,
    ): Promise<{ status: number; body: { error: { message: string; type: string; code: number } } }> => {
      const response = await fetch(`${emulator.url}${path}`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
      });
      return {
        status: response.status,
        body: (await response.json()) as { error: { message: string; type: string; code: number } },
      };
    };

    test.each([
      ['/v1/chat/completions', '{"messages": [', 400, /not valid JSON/],
      ['/v1/chat/completions', '[1, 2]', 400, /must be a JSON object/],
      ['/v1/chat/completions', '{"messages": []}', 400, /messages must be a non-empty array/],
      [
        '/v1/chat/completions',
        '{"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}',
        400,
        /only "text" parts/,
      ],
      [
        '/v1/chat/completions',
        '{"messages": [{"role": "user", "content": "x"}], "max_tokens": 0}',
        400,
        /max_tokens must be an integer >= 1/,
      ],
      ['/v1/chat/completions', '{"messages": [{"role": "user", "content": "x"}], "n": 2}', 400, /n must be 1/],
      [
        '/v1/chat/completions',
        '{"messages": [{"role": "user", "content": "x"}], "stream_options": {"include_usage": true}}',
        400,
        /only be set when stream is true/,
      ],
      [
        '/v1/chat/completions',
        '{"model": "gpt-4", "messages": [{"role": "user", "content": "x"}]}',
        404,
        /The model `gpt-4` does not exist/,
      ],
      ['/v1/completions', '{"prompt": [1, 2, 3]}', 400, /one prompt per request/],
      ['/v1/completions', '{"prompt": ""}', 400, /prompt is empty/],
      ['/v1/completions', JSON.stringify({ prompt: 'x'.repeat(4096) }), 400, /maximum context length is 1024 tokens/],
      ['/invocations', '{"input": "x"}', 400, /needs "messages".*or "prompt"/],
    ])('GIVEN POST %s %.60s THEN %i with an OpenAI-style error', async (path, body, status, message) => {
      const answer = await post(path, body);
      expect(answer.status).toBe(status);
      expect(answer.body.error.message).toMatch(message);
      expect(answer.body.error.code).toBe(status);
      expect(answer.body.error.type).toBe(status === 404 ? 'NotFoundError' : 'BadRequestError');
    });

    test('GIVEN a bad request through the openai client THEN it raises BadRequestError with the status', async () => {
      await expect(
        client.chat.completions.create({ model: 'tiny-emulated-model', messages: [], max_tokens: 1 }),
      ).rejects.toMatchObject({ status: 400 });
    });

    test('GIVEN an unknown path or a wrong method THEN 404, or 405 with Allow', async () => {
      expect((await fetch(`${emulator.url}/v2/nothing`)).status).toBe(404);
      const wrong = await fetch(`${emulator.url}/v1/completions`);
      expect(wrong.status).toBe(405);
      expect(wrong.headers.get('allow')).toBe('POST');
    });

    test('GIVEN a body over maxBodyBytes THEN 413', async () => {
      const small = await startEmulator({ profile: 'tiny', timeScale: 50, maxBodyBytes: 2048 });
      try {
        const response = await fetch(`${small.url}/v1/completions`, {
          method: 'POST',
          body: JSON.stringify({ prompt: 'x'.repeat(4000) }),
        });
        expect(response.status).toBe(413);
      } finally {
        await small.close();
      }
    });
  });
});

describe('emulator options and fleets', () => {
  test('GIVEN the p5 profile at time scale 100 THEN metrics report the modelled 0.41 s first token, not the wall time', async () => {
    const p5 = await startEmulator({ timeScale: 100 });
    try {
      await fetch(`${p5.url}/v1/completions`, {
        method: 'POST',
        body: JSON.stringify({ prompt: textOf('p5', 8000), max_tokens: 1 }),
      });
      const samples = parseMetrics(await (await fetch(`${p5.url}/metrics`)).text());
      const ttft = samples.get(
        'vllm:time_to_first_token_seconds_sum{model_name="meta-llama/Llama-3.1-70B-Instruct",engine="0"}',
      );
      expect(ttft).toBeCloseTo(0.41156, 4);
    } finally {
      await p5.close();
    }
  });

  test('GIVEN a fleet of 3 on port 0 THEN each instance answers on its own port with its own engine', async () => {
    const fleet = await startEmulatorFleet(3, { profile: 'tiny', timeScale: 50 });
    try {
      expect(new Set(fleet.urls).size).toBe(3);
      await fetch(`${fleet.urls[1]}/v1/completions`, {
        method: 'POST',
        body: JSON.stringify({ prompt: 'hello', max_tokens: 1 }),
      });
      expect(fleet.instances.map((i) => i.engine.stats().finished)).toEqual([0, 1, 0]);
    } finally {
      await fleet.close();
    }
  });

  test.each([
    [{ port: 70000 }, /port must be an integer in \[0, 65535\]/],
    [{ timeScale: 0 }, /timeScale must be a number in \(0, 1000000\]/],
    [{ timeScale: Number.NaN }, /timeScale/],
    [{ seed: 1.5 }, /seed must be an integer/],
    [{ profile: 'nope' }, /unknown profile "nope"/],
    [{ maxBodyBytes: 10 }, /maxBodyBytes must be an integer >= 1024/],
  ])('GIVEN options %p THEN they are refused with a message naming the option', (options, message) => {
    expect(() => resolveEmulatorOptions(options)).toThrow(message);
  });

  test('GIVEN a fleet whose ports would pass 65535 THEN it is refused before binding anything', async () => {
    await expect(startEmulatorFleet(3, { port: 65534 })).rejects.toThrow(/base port must be <= 65533/);
    await expect(startEmulatorFleet(0)).rejects.toThrow(/instances must be an integer in \[1, 256\]/);
  });
});
