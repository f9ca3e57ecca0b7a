import { builtinProfile, validateProfile } from '../../../router/src/emulator/engine-profile';
import { startEmulator, type RunningEmulator } from '../../../router/src/emulator/emulator-server';

async function complete(url: string, body: Record<string, unknown>): Promise<{ status: number; json: any }> {
  const res = await fetch(`${url}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'Hello there', max_tokens: 2, ...body }),
  });
  return { status: res.status, json: await res.json() };
}

describe('emulator request priority (vLLM `priority`)', () => {
  const emulators: RunningEmulator[] = [];
  afterAll(async () => {
    await Promise.all(emulators.map((e) => e.close()));
  });

  async function start(schedulingPolicy?: 'priority'): Promise<string> {
    const tiny = builtinProfile('tiny');
    const profile = schedulingPolicy ? validateProfile({ ...tiny, schedulingPolicy }) : tiny;
    const emulator = await startEmulator({ profile, timeScale: 50, port: 0 });
    emulators.push(emulator);
    return emulator.url;
  }

  test('GIVEN an FCFS engine WHEN a body carries priority 1 THEN 400, as vLLM refuses it', async () => {
    const url = await start();
    const { status, json } = await complete(url, { priority: 1 });
    expect(status).toBe(400);
    expect(json.error.message).toBe('Got priority 1 but Priority scheduling is not enabled.');
    expect(json.error.param).toBe('priority');
    // Priority 0 is the default and accepted anywhere.
    expect((await complete(url, { priority: 0 })).status).toBe(200);
  });

  test('GIVEN a priority engine WHEN a body carries priority -3 THEN it is served', async () => {
    const url = await start('priority');
    const { status, json } = await complete(url, { priority: -3 });
    expect(status).toBe(200);
    expect(json.usage.completion_tokens).toBe(2);
  });

  test('GIVEN a priority that is not an integer THEN 400 naming the field', async () => {
    const url = await start('priority');
    const { status, json } = await complete(url, { priority: '1' });
    expect(status).toBe(400);
    expect(json.error.param).toBe('priority');
  });
});
