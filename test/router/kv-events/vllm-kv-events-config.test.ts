import fc from 'fast-check';
import { parseEmulateFlags } from '../../../router/src/cli/emulate-command';
import {
  parseVllmKvEventsConfig,
  vllmBindsPublisherEndpoint,
  vllmKvEventsConfigJson,
} from '../../../router/src/kv-events/vllm-kv-events-config';

/** vLLM's --kv-events-config JSON: written by the container, read by `prefix-router emulate` as vLLM reads it. */
const FLAG = '--kv-events-config';

describe("when vLLM's KVEventsConfig JSON is written and read", () => {
  it('GIVEN any ipc endpoint, loopback replay port, buffer and topic THEN reading what was written gives them back', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^\/[a-z0-9/._-]{1,40}$/),
        fc.integer({ min: 1, max: 65535 }),
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.string({ maxLength: 20 }),
        (path, port, bufferSteps, topic) => {
          const config = {
            endpoint: `ipc://${path}`,
            replayEndpoint: `tcp://127.0.0.1:${port}`,
            bufferSteps,
            topic,
          };
          expect(parseVllmKvEventsConfig(FLAG, vllmKvEventsConfigJson(config))).toEqual(config);
        },
      ),
      { numRuns: 50 },
    );
  });

  it.each([
    ['tcp://*:5557', true],
    ['tcp://[::]:5557', true],
    ['ipc:///tmp/kv', true],
    ['inproc://kv', true],
    ['tcp://127.0.0.1:5557', false],
    ['tcp://localhost:5557', false],
  ])("GIVEN PUB endpoint %s THEN vLLM binds it: %s (else it connects, _socket_setup's rule)", (endpoint, binds) => {
    expect(vllmBindsPublisherEndpoint(endpoint)).toBe(binds);
  });

  it.each([
    ['not json', `${FLAG} must be a JSON object (vLLM's KVEventsConfig), got "not json"`],
    ['[1]', `${FLAG} must be a JSON object (vLLM's KVEventsConfig)`],
    ['{"enable_kv_cache_events":false,"endpoint":"ipc:///k"}', `${FLAG} must set "enable_kv_cache_events": true`],
    [
      '{"enable_kv_cache_events":true,"publisher":"null","endpoint":"ipc:///k"}',
      `${FLAG}: "publisher" must be "zmq", got "null"`,
    ],
    ['{"enable_kv_cache_events":true,"endpoints":"ipc:///k"}', `${FLAG} has keys vLLM does not know: endpoints`],
    [
      '{"enable_kv_cache_events":true,"endpoint":"tcp://127.0.0.1:5557"}',
      `${FLAG}: vLLM connects its PUB socket to tcp://127.0.0.1:5557 instead of binding it`,
    ],
    ['{"enable_kv_cache_events":true}', `${FLAG} "endpoint": tcp://*:5557 is not a loopback address`],
    [
      '{"enable_kv_cache_events":true,"endpoint":"ipc:///k","replay_endpoint":"tcp://10.0.0.1:5558"}',
      `${FLAG} "replay_endpoint": tcp://10.0.0.1:5558 is not a loopback address`,
    ],
    [
      '{"enable_kv_cache_events":true,"endpoint":"ipc:///k","buffer_steps":0}',
      `${FLAG}: "buffer_steps" must be an integer between 1 and 1000000, got 0`,
    ],
  ])('GIVEN %s THEN it is refused: %s', (text, message) => {
    expect(() => parseVllmKvEventsConfig(FLAG, text)).toThrow(message);
  });
});

describe('when prefix-router emulate is given --kv-events-config', () => {
  const config =
    '{"enable_kv_cache_events":true,"publisher":"zmq","endpoint":"ipc:///tmp/e.kv","replay_endpoint":"tcp://127.0.0.1:0","topic":"kv@p@m"}';

  it('GIVEN one instance THEN it publishes on the endpoints the JSON names', () => {
    expect(parseEmulateFlags({ kvEventsConfig: config }).kvEvents).toMatchObject({
      endpoint: 'ipc:///tmp/e.kv',
      replayEndpoint: 'tcp://127.0.0.1:0',
      topic: 'kv@p@m',
      encoding: 'map',
    });
  });

  it('GIVEN two instances, or --kv-events beside it THEN it is refused naming the flags', () => {
    expect(() => parseEmulateFlags({ kvEventsConfig: config, instances: '2' })).toThrow(
      "--kv-events-config names one engine's sockets: use it with --instances 1 (got 2)",
    );
    expect(() => parseEmulateFlags({ kvEventsConfig: config, kvEvents: '5557' })).toThrow(
      '--kv-events-config replaces --kv-events: give one or the other',
    );
  });
});
