import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { compiledCli } from '../../compiled-dist';
import { ContainerProcess, eventually, ROOT } from './container-process';

/**
 * The "without Docker" command of docs/container.md, run as written except that the compiled CLI
 * (`node dist/bin/prefix-router.js`, built when stale: test/compiled-dist.ts) is named by absolute paths, this node
 * and this checkout's dist/, and the router and the engines listen on free ports.
 */
const DOC = readFileSync(join(ROOT, 'docs', 'container.md'), 'utf8');
const COMPILED_CLI = 'node dist/bin/prefix-router.js';

/** The `VAR=value` assignments of the documented command (a shell-style `\\`-continued line). */
function documentedEnv(): Record<string, string> {
  const block = /```sh\n(PREFIX_ROUTER_MODE=[\s\S]*?node dist\/bin\/prefix-router\.js container)\n```/.exec(DOC);
  expect(block).not.toBeNull();
  const command = block![1].replace(/\\\n/g, ' ');
  const env: Record<string, string> = {};
  for (const m of command.matchAll(/([A-Z_]+)=('([^']*)'|\S+)/g)) env[m[1]] = m[3] ?? m[2];
  expect(command.trim().endsWith(`${COMPILED_CLI} container`)).toBe(true);
  return env;
}

describe('when the documented command without Docker is run', () => {
  let container: ContainerProcess | undefined;
  afterAll(async () => {
    container?.killAll();
    await container?.exited;
  });

  it('GIVEN its variables THEN three emulated engines serve behind the router and SIGTERM stops everything with status 0', async () => {
    const env = documentedEnv();
    expect(env).toMatchObject({
      PREFIX_ROUTER_MODE: 'multi-engine',
      PREFIX_ROUTER_ENGINES: '3',
      PREFIX_ROUTER_GPUS: '0',
    });
    expect(env.PREFIX_ROUTER_ENGINE_COMMAND.startsWith(COMPILED_CLI)).toBe(true);
    env.PREFIX_ROUTER_ENGINE_COMMAND = env.PREFIX_ROUTER_ENGINE_COMMAND.replace(
      COMPILED_CLI,
      `'${process.execPath}' '${compiledCli()}'`,
    );
    container = new ContainerProcess({
      ...env,
      PREFIX_ROUTER_PORT: '0',
      PREFIX_ROUTER_HEALTH_INTERVAL_MS: '200',
      PREFIX_ROUTER_EMF: 'off',
    });
    const url = await container.routerUrl();
    await eventually(
      async () => {
        const res = await request(`${url}/ping`);
        await res.body.dump();
        return res.statusCode === 200;
      },
      '/ping 200',
      60_000,
      200,
    );
    const res = await request(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'tiny-emulated-model',
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 2,
      }),
    });
    await res.body.dump();
    expect(res.statusCode).toBe(200);
    expect(container.logs().filter((l) => l.msg === 'engine started')).toHaveLength(3);
    container.child.kill('SIGTERM');
    expect(await container.exited).toEqual({ code: 0, signal: null });
  });
});
