import OpenAI, { NotFoundError } from 'openai';
import { parseEmulateFlags } from '../../../router/src/cli/emulate-command';
import { ConfigError } from '../../../router/src/common/config-error';
import { startEmulator, type RunningEmulator } from '../../../router/src/emulator/emulator-server';
import { parseLoraModule } from '../../../router/src/emulator/lora-modules';

/** The single vllm:lora_requests_info sample line's labels, or undefined. */
function loraInfo(text: string): Record<string, string> | undefined {
  const line = text.split('\n').find((l) => l.startsWith('vllm:lora_requests_info{'));
  if (line === undefined) return undefined;
  return Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
}

describe('when the emulator serves LoRA adapters (vLLM --enable-lora --lora-modules)', () => {
  let emulator: RunningEmulator;
  let client: OpenAI;

  beforeAll(async () => {
    emulator = await startEmulator({
      profile: 'tiny',
      timeScale: 1,
      modelName: 'base',
      maxLoras: 2,
      loraModules: [
        parseLoraModule('sql=/adapters/sql'),
        parseLoraModule('{"name":"support","path":"/adapters/support","base_model_name":"base"}'),
      ],
    });
    client = new OpenAI({ baseURL: `${emulator.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });
  afterAll(() => emulator.close());

  it('GIVEN GET /v1/models THEN the base model comes first, then each adapter with its path as root and the base as parent', async () => {
    const models = (await client.models.list()).data as unknown as Array<{
      id: string;
      root: string;
      parent: string | null;
    }>;
    expect(models.map((m) => [m.id, m.root, m.parent])).toEqual([
      ['base', 'base', null],
      ['sql', '/adapters/sql', 'base'],
      ['support', '/adapters/support', 'base'],
    ]);
  });

  it('GIVEN one prompt under the base model, sql and support on one engine THEN each is a miss the first time and a hit only under its own name', async () => {
    const prompt = 'A long shared document for the adapters. '.repeat(20);
    for (const model of ['base', 'sql', 'support']) {
      const first = await client.completions.create({ model, prompt, max_tokens: 1 });
      expect(first.model).toBe(model);
      expect(first.usage?.prompt_tokens_details?.cached_tokens ?? 0).toBe(0);
    }
    const again = await client.completions.create({ model: 'sql', prompt, max_tokens: 1 });
    expect(again.usage?.prompt_tokens_details?.cached_tokens).toBeGreaterThan(0);
  });

  it('GIVEN a model that is neither the base nor an adapter THEN vLLM\u2019s 404 naming param model', async () => {
    const error = (await client.completions
      .create({ model: 'other', prompt: 'x' })
      .catch((e: unknown) => e)) as NotFoundError;
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.error).toEqual({
      message: 'The model `other` does not exist.',
      type: 'NotFoundError',
      param: 'model',
      code: 404,
    });
  });

  it('GIVEN adapter requests running and waiting THEN vllm:lora_requests_info lists them as vLLM labels them, and empties when they end', async () => {
    const idle = loraInfo(await (await fetch(`${emulator.url}/metrics`)).text());
    expect(idle).toEqual({ max_lora: '2', waiting_lora_adapters: '', running_lora_adapters: '' });
    const controller = new AbortController();
    const streams = ['sql', 'support'].map((model) =>
      client.completions.create(
        { model, prompt: `${model} running request `.repeat(8), max_tokens: 600, stream: true },
        { signal: controller.signal },
      ),
    );
    const started = await Promise.all(streams);
    for (const s of started) await s[Symbol.asyncIterator]().next();
    const busy = loraInfo(await (await fetch(`${emulator.url}/metrics`)).text());
    expect(busy?.running_lora_adapters.split(',').sort()).toEqual(['sql', 'support']);
    controller.abort();
    for (
      let i = 0;
      i < 1000 && loraInfo(await (await fetch(`${emulator.url}/metrics`)).text())?.running_lora_adapters !== '';
      i++
    )
      await new Promise((r) => setTimeout(r, 10));
    expect(loraInfo(await (await fetch(`${emulator.url}/metrics`)).text())).toMatchObject({
      running_lora_adapters: '',
      waiting_lora_adapters: '',
    });
  });
});

describe('when an emulator without adapters is scraped', () => {
  it('GIVEN no --lora-modules THEN there is no vllm:lora_requests_info, as vLLM exports it only with LoRA enabled', async () => {
    const plain = await startEmulator({ profile: 'tiny' });
    try {
      expect(loraInfo(await (await fetch(`${plain.url}/metrics`)).text())).toBeUndefined();
    } finally {
      await plain.close();
    }
  });
});

describe('when --lora-modules values are parsed', () => {
  it.each([
    ['sql=/a/sql', { name: 'sql', path: '/a/sql' }],
    ['{"name":"x","path":"s3://b/x"}', { name: 'x', path: 's3://b/x' }],
  ])('GIVEN %s THEN %j', (text, module) => {
    expect(parseLoraModule(text)).toEqual(module);
  });

  it.each(['sql', '=path', 'sql=', '{"name":"x"}', '{not json'])(
    'GIVEN %s THEN the flag is refused naming --lora-modules',
    (text) => {
      expect(() => parseEmulateFlags({ loraModules: [text] })).toThrow(ConfigError);
      expect(() => parseEmulateFlags({ loraModules: [text] })).toThrow(/--lora-modules/);
    },
  );

  it('GIVEN an adapter named like the served model, or twice THEN the start is refused', async () => {
    await expect(
      startEmulator({ profile: 'tiny', modelName: 'base', loraModules: [{ name: 'base', path: '/a' }] }),
    ).rejects.toThrow(/served model's name/);
    await expect(
      startEmulator({
        profile: 'tiny',
        loraModules: [
          { name: 'a', path: '/a' },
          { name: 'a', path: '/b' },
        ],
      }),
    ).rejects.toThrow(/given twice/);
  });

  it.each([
    ['0', false],
    ['1', true],
    ['1024', true],
    ['1025', false],
  ])('GIVEN --max-loras %s THEN accepted: %s', (value, ok) => {
    const parse = () => parseEmulateFlags({ loraModules: ['a=/a'], maxLoras: value });
    if (ok) expect(parse().maxLoras).toBe(Number(value));
    else expect(parse).toThrow(/--max-loras/);
  });
});

describe('when adapters are loaded and unloaded at run time (vLLM VLLM_ALLOW_RUNTIME_LORA_UPDATING)', () => {
  const post = (url: string, body: unknown) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('GIVEN it is not allowed THEN the routes are 404, as in vLLM without the variable', async () => {
    const plain = await startEmulator({ profile: 'tiny' });
    try {
      expect((await post(`${plain.url}/v1/load_lora_adapter`, { lora_name: 'a', lora_path: '/a' })).status).toBe(404);
    } finally {
      await plain.close();
    }
  });

  it('GIVEN it is allowed THEN load lists the adapter and serves it, a second load is 400, unload removes it, unloading it again is 404', async () => {
    const emulator = await startEmulator({ profile: 'tiny', modelName: 'base', allowRuntimeLoraUpdating: true });
    try {
      const load = await post(`${emulator.url}/v1/load_lora_adapter`, {
        lora_name: 'late',
        lora_path: '/adapters/late',
      });
      expect([load.status, await load.text()]).toEqual([200, "Success: LoRA adapter 'late' added successfully."]);
      expect(emulator.loraModules).toEqual([{ name: 'late', path: '/adapters/late' }]);
      const models = (await (await fetch(`${emulator.url}/v1/models`)).json()) as {
        data: Array<{ id: string; parent: string | null }>;
      };
      expect(models.data.map((m) => [m.id, m.parent])).toEqual([
        ['base', null],
        ['late', 'base'],
      ]);
      expect((await post(`${emulator.url}/v1/completions`, { model: 'late', prompt: 'x', max_tokens: 1 })).status).toBe(
        200,
      );
      const again = await post(`${emulator.url}/v1/load_lora_adapter`, {
        lora_name: 'late',
        lora_path: '/adapters/late',
      });
      expect([again.status, ((await again.json()) as { error: { message: string } }).error.message]).toEqual([
        400,
        "The lora adapter 'late' has already been loaded.",
      ]);
      expect((await post(`${emulator.url}/v1/load_lora_adapter`, { lora_name: 'x' })).status).toBe(400);
      expect((await post(`${emulator.url}/v1/unload_lora_adapter`, { lora_name: 'late' })).status).toBe(200);
      expect((await post(`${emulator.url}/v1/completions`, { model: 'late', prompt: 'x', max_tokens: 1 })).status).toBe(
        404,
      );
      const gone = await post(`${emulator.url}/v1/unload_lora_adapter`, { lora_name: 'late' });
      expect([gone.status, ((await gone.json()) as { error: { message: string } }).error.message]).toEqual([
        404,
        "The lora adapter 'late' cannot be found.",
      ]);
    } finally {
      await emulator.close();
    }
  });
});
