import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { request } from 'undici';
import {
  startFakeBackend,
  type FakeBackend,
  type FakeBackendBehavior,
} from '../../../../router/bench/fake-openai-backend';
import type { RouterOptions } from '../../../../router/src/config';
import { createRouterLogger, startRouter, type RunningRouter } from '../../../../router/src/server';

export interface Fixture {
  readonly router: RunningRouter;
  readonly backends: FakeBackend[];
  /** Every log line the router wrote (JSON strings), when `captureLogs` was set. */
  readonly logs: string[];
  close(): Promise<void>;
}

export interface FixtureOptions {
  readonly backends?: number;
  readonly behavior?: Partial<FakeBackendBehavior>;
  /** Extra backend URLs (e.g. a closed port) appended after the fake ones. */
  readonly extraBackendUrls?: readonly string[];
  readonly router?: Partial<RouterOptions>;
  readonly captureLogs?: boolean;
}

/** Starts fake backends and a router in front of them on 127.0.0.1 ephemeral ports; logs silenced or captured. */
export async function startFixture(options: FixtureOptions = {}): Promise<Fixture> {
  const backends = await Promise.all(
    Array.from({ length: options.backends ?? 2 }, (_, i) =>
      startFakeBackend({ name: `b${i}`, behavior: options.behavior }),
    ),
  );
  const logs: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((l) => l.length > 0),
      );
      cb();
    },
  });
  const router = await startRouter(
    {
      port: 0,
      healthCheck: { intervalMs: 0 },
      // These tests read which backend served a request; the default ('off') is tested in test/router/security.
      routingHeaders: 'all',
      ...options.router,
      backends: [...backends.map((b) => b.url), ...(options.extraBackendUrls ?? [])],
    },
    { logger: options.captureLogs ? createRouterLogger('debug', destination) : createRouterLogger('silent') },
  );
  return {
    router,
    backends,
    logs,
    async close() {
      await router.close();
      await Promise.all(backends.map((b) => b.close()));
    },
  };
}

export function chatBody(text: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    model: 'fake-model',
    messages: [
      { role: 'system', content: text },
      { role: 'user', content: 'question' },
    ],
    ...extra,
  });
}

/** POST with undici; returns status, headers and the body text. */
export async function post(
  url: string,
  body: string | Buffer,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<{
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: () => unknown;
}> {
  const res = await request(url, { method: 'POST', body, headers });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: () => JSON.parse(text) };
}

export async function get(
  url: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  const res = await request(url, { method: 'GET' });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

/** Polls `condition` every 10 ms until true or `timeoutMs` passes (then fails with `what`). */
export async function waitFor(what: string, condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A URL on 127.0.0.1 where nothing listens (a port that was just freed). */
export async function closedPortUrl(): Promise<string> {
  const b = await startFakeBackend();
  await b.close();
  return b.url;
}

let stateHashKeyPath: string | undefined;
/**
 * A state-hash key file shared by the routers of a test (sidecars and the replicas observing them must hold the
 * same secret, `--state-hash-key-file`); written once per test process, removed with the process's tmp dir.
 */
export function sharedStateHashKeyFile(): string {
  if (stateHashKeyPath === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'state-hash-key-'));
    stateHashKeyPath = join(dir, 'state-hash.key');
    writeFileSync(stateHashKeyPath, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
  }
  return stateHashKeyPath;
}
