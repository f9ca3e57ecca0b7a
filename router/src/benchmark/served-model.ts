import { Pool } from 'undici';
import { errorMessage, transportErrorCode } from '../common/request-errors';
import type { TargetUrl } from './target-url';
import { modelCardsOf } from '../protocol/model-cards';

/**
 * The model a server serves, from `GET /v1/models` (vLLM, the router and the emulator all answer it): the
 * benchmark's default `model`, so a run against an unknown server needs no guessing.
 */
export class ModelDiscoveryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelDiscoveryError';
  }
}

export async function discoverModel(
  target: TargetUrl,
  options: { timeoutMs?: number; headers?: Readonly<Record<string, string>> } = {},
): Promise<string> {
  const pool = new Pool(target.origin, { connections: 1 });
  const where = `GET ${target.display}/v1/models`;
  try {
    const res = await pool.request({
      method: 'GET',
      path: `${target.basePath}/v1/models`,
      headers: { ...(options.headers ?? {}), accept: 'application/json' },
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200)
      throw new ModelDiscoveryError(`${where} answered HTTP ${res.statusCode}; pass the model name with --model`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ModelDiscoveryError(`${where} did not answer JSON; pass the model name with --model`);
    }
    const first = modelCardsOf(body)?.[0];
    if (first === undefined || first.id === '')
      throw new ModelDiscoveryError(`${where} listed no model; pass the model name with --model`);
    return first.id;
  } catch (err) {
    if (err instanceof ModelDiscoveryError) throw err;
    // A server that is down or unreachable is not a model problem: say so, and leave --model out of it.
    const code = transportErrorCode(err, false);
    if (code === 'connection_refused' || code === 'dns_error' || code === 'timeout' || code === 'connection_reset') {
      throw new ModelDiscoveryError(
        `the server at ${target.display} is unreachable (${code.replace('_', ' ')}: ${errorMessage(err)}); is it running and is --url right?`,
      );
    }
    throw new ModelDiscoveryError(`${where} failed (${errorMessage(err)}); pass the model name with --model`);
  } finally {
    await pool.destroy();
  }
}
