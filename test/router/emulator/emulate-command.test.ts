import { emulate, parseEmulateFlags } from '../../../router/src/cli/emulate-command';
import { builtinProfile } from '../../../router/src/emulator/engine-profile';
import { sequenceBytes } from '../../../router/src/kv-events/kv-event-publisher';
import { decode } from '@msgpack/msgpack';
import { Dealer } from 'zeromq';

describe('prefix-router emulate flags', () => {
  test('GIVEN no flags THEN one p5 instance on port 8000 at real time', () => {
    expect(parseEmulateFlags({})).toEqual({
      instances: 1,
      fleet: [builtinProfile('p5-llama-3.1-70b')],
      port: 8000,
      host: '127.0.0.1',
      profile: 'p5-llama-3.1-70b',
      timeScale: 1,
      model: undefined,
      loraModules: [],
      maxLoras: undefined,
      allowRuntimeLoraUpdating: false,
      serverDevMode: false,
      seed: 0,
      logLevel: 'info',
      kvEvents: undefined,
    });
  });

  test.each([
    [{ instances: '0' }, /--instances must be N or COUNT:PROFILE groups .*, 1–256 instances in all \(got "0"\)/],
    [{ instances: '257' }, /--instances must be N or COUNT:PROFILE groups .* \(got "257": 257 instances\)/],
    [{ instances: '2.5' }, /--instances must be N or COUNT:PROFILE groups/],
    [
      { instances: '200:p5-llama-3.1-70b,57:p4d-llama-3.1-70b' },
      /--instances must be N or COUNT:PROFILE groups .*: 257 instances\)/,
    ],
    [{ instances: '1:p9' }, /--instances: unknown profile "p9"/],
    [{ profile: 'p9' }, /--profile: unknown profile "p9"/],
    [{ port: '-1' }, /--port must be an integer between 0 and 65535/],
    [{ port: '65536' }, /--port must be an integer between 0 and 65535/],
    [{ port: '0x10' }, /--port must be an integer between 0 and 65535 \(got "0x10"\)/],
    [{ port: '65535', instances: '2' }, /base port must be <= 65534/],
    [{ timeScale: '0' }, /--time-scale must be a number greater than 0 and at most 1000000 \(got "0"\)/],
    [{ timeScale: '1000001' }, /--time-scale must be a number greater than 0 and at most 1000000/],
    [{ timeScale: 'fast' }, /--time-scale must be a number/],
    [{ logLevel: 'loud' }, /--log-level must be one of fatal, error, warn, info, debug/],
    [{ model: ' ' }, /--model must not be empty/],
    [{ seed: '-3' }, /--seed must be an integer between 0 and /],
    [{ kvEvents: '65536' }, /--kv-events must be an integer between 0 and 65535 \(got "65536"\)/],
    [{ kvEvents: '65535', instances: '2' }, /--kv-events 65535 with --instances 2 .* base port must be <= 65534/],
    [{ kvEvents: '0', kvEventsReplayPort: '-1' }, /--kv-events-replay-port must be an integer between 0 and 65535/],
    [{ kvEventsReplayPort: '5558' }, /--kv-events-replay-port needs --kv-events/],
    [{ kvEvents: '0', kvEventsEncoding: 'json' }, /--kv-events-encoding must be one of map, positional, got "json"/],
    [{ kvEvents: '0', kvEventsBufferSteps: '0' }, /--kv-events-buffer-steps must be an integer between 1 and 1000000/],
    [{ kvEvents: '0', kvEventsBufferSteps: '1000001' }, /--kv-events-buffer-steps must be an integer between 1/],
  ])('GIVEN %p THEN it is refused naming the flag and its range', (flags, message) => {
    expect(() => parseEmulateFlags(flags)).toThrow(message);
  });

  test('GIVEN --profile h200-llama-3.1-8b THEN the started instance serves Llama 3.1 8B with that profile', async () => {
    const signals = ['SIGTERM', 'SIGINT'] as const;
    const before = signals.map((s) => process.listeners(s));
    const fleet = await emulate({ profile: 'h200-llama-3.1-8b', port: '0', timeScale: '1000', logLevel: 'fatal' });
    try {
      expect(fleet.instances[0].profile.name).toBe('h200-llama-3.1-8b');
      const models = (await (await fetch(`${fleet.urls[0]}/v1/models`)).json()) as {
        data: { id: string; max_model_len: number }[];
      };
      expect(models.data[0]).toMatchObject({ id: 'meta-llama/Llama-3.1-8B-Instruct', max_model_len: 131072 });
    } finally {
      await fleet.close();
      // emulate() stops the fleet on SIGTERM/SIGINT like the CLI; drop those handlers again.
      signals.forEach((s, i) =>
        process
          .listeners(s)
          .filter((l) => !before[i].includes(l))
          .forEach((l) => process.off(s, l)),
      );
    }
  });

  test('GIVEN --instances 2:p5-llama-3.1-70b,1:p4d-llama-3.1-70b THEN consecutive ports serve the two profiles in that order', async () => {
    const signals = ['SIGTERM', 'SIGINT'] as const;
    const before = signals.map((s) => process.listeners(s));
    const fleet = await emulate({
      instances: '2:p5-llama-3.1-70b,1:p4d-llama-3.1-70b',
      port: '0',
      timeScale: '1000',
      logLevel: 'fatal',
    });
    try {
      expect(fleet.instances.map((i) => i.profile.name)).toEqual([
        'p5-llama-3.1-70b',
        'p5-llama-3.1-70b',
        'p4d-llama-3.1-70b',
      ]);
      // Each engine reports its own KV capacity (what cache-aware reads from vllm:cache_config_info).
      const blocks = await Promise.all(
        fleet.urls.map(
          async (url) =>
            /vllm:cache_config_info\{[^}]*num_gpu_blocks="(\d+)"/.exec(
              await (await fetch(`${url}/metrics`)).text(),
            )?.[1],
        ),
      );
      expect(blocks).toEqual(['84000', '84000', '26000']);
    } finally {
      await fleet.close();
      signals.forEach((s, i) =>
        process
          .listeners(s)
          .filter((l) => !before[i].includes(l))
          .forEach((l) => process.off(s, l)),
      );
    }
  });

  test('GIVEN --kv-events 5557 --kv-events-replay-port 5567 --instances 2 THEN the fleet publishes on consecutive ports', () => {
    expect(
      parseEmulateFlags({ kvEvents: '5557', kvEventsReplayPort: '5567', instances: '2', kvEventsTopic: 'kv@a@m' })
        .kvEvents,
    ).toEqual({ port: 5557, replayPort: 5567, encoding: 'map', topic: 'kv@a@m', bufferSteps: 10_000 });
  });

  test('GIVEN --kv-events 0 --kv-events-replay-port 0 THEN the instance publishes on loopback and replays its start batch', async () => {
    const signals = ['SIGTERM', 'SIGINT'] as const;
    const before = signals.map((s) => process.listeners(s));
    const fleet = await emulate({
      profile: 'tiny',
      port: '0',
      kvEvents: '0',
      kvEventsReplayPort: '0',
      kvEventsEncoding: 'positional',
      logLevel: 'fatal',
    });
    const dealer = new Dealer({ linger: 0, receiveTimeout: 2000 });
    try {
      const { endpoint, replayEndpoint } = fleet.instances[0].kvEvents!;
      expect(endpoint).toMatch(/^tcp:\/\/127\.0\.0\.1:\d+$/);
      dealer.connect(replayEndpoint!);
      await dealer.send(['', sequenceBytes(0n)]);
      const [, seq, payload] = await dealer.receive();
      expect(seq.readBigUInt64BE()).toBe(0n);
      expect(decode(payload)).toEqual([expect.any(Number), [['AllBlocksCleared']], 0]);
    } finally {
      dealer.close();
      await fleet.close();
      signals.forEach((s, i) =>
        process
          .listeners(s)
          .filter((l) => !before[i].includes(l))
          .forEach((l) => process.off(s, l)),
      );
    }
  });

  test.each([
    [{ instances: '1' }, 1],
    [{ instances: '256', port: '0' }, 256],
    [{ port: '65534', instances: '2' }, 2],
  ])('GIVEN boundary %p THEN it is accepted', (flags, instances) => {
    expect(parseEmulateFlags(flags).instances).toBe(instances);
  });
});
