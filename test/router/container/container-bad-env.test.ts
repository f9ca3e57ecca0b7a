import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ContainerProcess, ROOT } from './container-process';

/** The real process refuses bad settings at once: a message naming each variable, exit non-zero, no engine started. */
describe('when prefix-router container gets invalid settings', () => {
  const running: ContainerProcess[] = [];
  afterAll(async () => {
    for (const c of running) {
      c.killAll();
      await c.exited;
    }
  });

  it('GIVEN GPUs not divisible by engines and an unknown policy THEN it exits 1 naming both variables, before starting any engine', async () => {
    const c = new ContainerProcess({
      PREFIX_ROUTER_MODE: 'multi-engine',
      PREFIX_ROUTER_ENGINES: '3',
      PREFIX_ROUTER_GPUS: '8',
      PREFIX_ROUTER_POLICY: 'fastest',
      PREFIX_ROUTER_ENGINE_COMMAND: 'true',
    });
    running.push(c);
    const exit = await c.exited;
    expect(exit.code).toBe(1);
    expect(c.stderr).toContain('invalid container configuration');
    expect(c.stderr).toContain('PREFIX_ROUTER_GPUS must be divisible by PREFIX_ROUTER_ENGINES so every engine gets the same number of GPUs (got 8 GPUs for 3 engines)');
    expect(c.stderr).toMatch(/PREFIX_ROUTER_POLICY .*"fastest"/);
    expect(c.logs().some((l) => l.msg === 'engine started')).toBe(false);
  });

  it('GIVEN the example of docs/errors.md THEN the process prints exactly its lines', async () => {
    const c = new ContainerProcess({ PREFIX_ROUTER_MODE: 'multi-engine', PREFIX_ROUTER_ENGINES: '3', PREFIX_ROUTER_GPUS: '8', PREFIX_ROUTER_HEALTH_FAILURE_THRESHOLD: '0' });
    running.push(c);
    expect((await c.exited).code).toBe(1);
    const doc = readFileSync(join(ROOT, 'docs', 'errors.md'), 'utf8');
    const example = /```\n(prefix-router: invalid container configuration:\n[\s\S]*?)```/.exec(doc)![1];
    expect(c.stderr).toBe(example);
  });

  it('GIVEN zero engines in multi-engine mode and a bad EMF switch THEN it exits 1 naming both variables', async () => {
    const c = new ContainerProcess({ PREFIX_ROUTER_MODE: 'multi-engine', PREFIX_ROUTER_ENGINES: '0', PREFIX_ROUTER_EMF: 'maybe' });
    running.push(c);
    const exit = await c.exited;
    expect(exit.code).toBe(1);
    expect(c.stderr).toContain('PREFIX_ROUTER_ENGINES must be an integer between 1 and 64 (got "0")');
    expect(c.stderr).toContain('PREFIX_ROUTER_EMF must be on or off (got "maybe")');
  });
});
