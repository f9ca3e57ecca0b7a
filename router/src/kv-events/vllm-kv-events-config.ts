/**
 * vLLM's `--kv-events-config` JSON (`KVEventsConfig`, vllm/config/kv_events.py, vllm-project/vllm@00634b8a):
 * `enable_kv_cache_events`, `publisher` ("zmq"), `endpoint` (the PUB socket), `replay_endpoint` (the ROUTER socket),
 * `buffer_steps`, `hwm`, `max_queue_size`, `topic`. The container writes it for each engine it starts; `prefix-router
 * emulate --kv-events-config` reads it, so an emulated engine takes exactly what vLLM takes.
 *
 * vLLM's publisher binds its PUB socket only when the endpoint has `*` or `::` or is `ipc://`/`inproc://`, and
 * otherwise connects to it (`ZmqEventPublisher._socket_setup`, vllm/distributed/kv_events.py,
 * vllm-project/vllm@0181ea31); its replay ROUTER socket always binds. A subscriber that connects (ours) therefore
 * needs an `ipc://` endpoint to stay on the machine: `tcp://127.0.0.1:PORT` makes vLLM connect, and `tcp://*:PORT`
 * publishes the prompts' token ids on every interface.
 */
import { checkKvEndpoint } from './zmq-endpoint';

/** What of a KVEventsConfig a publisher acts on. */
export interface VllmKvEventsConfig {
  readonly endpoint: string;
  readonly replayEndpoint?: string;
  readonly bufferSteps?: number;
  readonly topic?: string;
}

/** The JSON for `--kv-events-config`, keys as vLLM names them. */
export function vllmKvEventsConfigJson(config: VllmKvEventsConfig): string {
  return JSON.stringify({
    enable_kv_cache_events: true,
    publisher: 'zmq',
    endpoint: config.endpoint,
    ...(config.replayEndpoint === undefined ? {} : { replay_endpoint: config.replayEndpoint }),
    ...(config.bufferSteps === undefined ? {} : { buffer_steps: config.bufferSteps }),
    ...(config.topic === undefined ? {} : { topic: config.topic }),
  });
}

/** Whether vLLM's publisher binds this PUB endpoint (else it connects to it). */
export function vllmBindsPublisherEndpoint(endpoint: string): boolean {
  return (
    endpoint.includes('*') ||
    endpoint.includes('::') ||
    endpoint.startsWith('ipc://') ||
    endpoint.startsWith('inproc://')
  );
}

/** KVEventsConfig keys vLLM knows (others make vLLM refuse the JSON, so they are refused here too). */
const KNOWN_KEYS = [
  'enable_kv_cache_events',
  'publisher',
  'endpoint',
  'replay_endpoint',
  'buffer_steps',
  'hwm',
  'max_queue_size',
  'topic',
];

/**
 * Reads `--kv-events-config` as a publisher that binds on this machine: events on, publisher zmq, a PUB endpoint
 * vLLM would bind that is also loopback-only (so `ipc://`), a loopback replay endpoint. Throws a RangeError naming
 * `flag` and the rule broken.
 */
export function parseVllmKvEventsConfig(flag: string, text: string): VllmKvEventsConfig {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new RangeError(`${flag} must be a JSON object (vLLM's KVEventsConfig), got ${JSON.stringify(text)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new RangeError(`${flag} must be a JSON object (vLLM's KVEventsConfig), got ${JSON.stringify(text)}`);
  const o = parsed as Record<string, unknown>;
  const unknown = Object.keys(o).filter((k) => !KNOWN_KEYS.includes(k));
  if (unknown.length > 0) throw new RangeError(`${flag} has keys vLLM does not know: ${unknown.join(', ')}`);
  if (o.enable_kv_cache_events !== true) throw new RangeError(`${flag} must set "enable_kv_cache_events": true`);
  if (o.publisher !== undefined && o.publisher !== 'zmq')
    throw new RangeError(`${flag}: "publisher" must be "zmq", got ${JSON.stringify(o.publisher)}`);
  const endpoint = typeof o.endpoint === 'string' ? o.endpoint : 'tcp://*:5557';
  if (!vllmBindsPublisherEndpoint(endpoint))
    throw new RangeError(
      `${flag}: vLLM connects its PUB socket to ${endpoint} instead of binding it (it binds only wildcard and ipc:// endpoints); give an ipc:// endpoint`,
    );
  checkKvEndpoint(`${flag} "endpoint"`, endpoint);
  const replay = o.replay_endpoint;
  if (replay !== undefined && replay !== null && typeof replay !== 'string')
    throw new RangeError(`${flag}: "replay_endpoint" must be a string or null, got ${JSON.stringify(replay)}`);
  if (typeof replay === 'string') checkKvEndpoint(`${flag} "replay_endpoint"`, replay);
  const steps = o.buffer_steps;
  if (steps !== undefined && (!Number.isInteger(steps) || (steps as number) < 1 || (steps as number) > 1_000_000))
    throw new RangeError(
      `${flag}: "buffer_steps" must be an integer between 1 and 1000000, got ${JSON.stringify(steps)}`,
    );
  if (o.topic !== undefined && typeof o.topic !== 'string')
    throw new RangeError(`${flag}: "topic" must be a string, got ${JSON.stringify(o.topic)}`);
  return {
    endpoint,
    ...(typeof replay === 'string' ? { replayEndpoint: replay } : {}),
    ...(steps === undefined ? {} : { bufferSteps: steps as number }),
    ...(o.topic === undefined ? {} : { topic: o.topic }),
  };
}
