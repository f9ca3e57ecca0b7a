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

  it('GIVEN the example of docs/errors.md (GPUs not divisible, a bad router setting) THEN it prints exactly its lines and starts no engine', async () => {
    const c = new ContainerProcess({
      PREFIX_ROUTER_MODE: 'multi-engine',
      PREFIX_ROUTER_ENGINES: '3',
      PREFIX_ROUTER_GPUS: '8',
      PREFIX_ROUTER_HEALTH_FAILURE_THRESHOLD: '0',
    });
    running.push(c);
    expect((await c.exited).code).toBe(1);
    const doc = readFileSync(join(ROOT, 'docs', 'errors.md'), 'utf8');
    const example = /```\n(prefix-router: invalid container configuration:\n[\s\S]*?)```/.exec(doc)![1];
    expect(c.stderr).toBe(example);
    expect(c.logs().some((l) => l.msg === 'engine started')).toBe(false);
  });

  it('GIVEN zero engines in multi-engine mode and a bad EMF switch THEN it exits 1 naming both variables', async () => {
    const c = new ContainerProcess({
      PREFIX_ROUTER_MODE: 'multi-engine',
      PREFIX_ROUTER_ENGINES: '0',
      PREFIX_ROUTER_EMF: 'maybe',
    });
    running.push(c);
    const exit = await c.exited;
    expect(exit.code).toBe(1);
    expect(c.stderr).toContain('PREFIX_ROUTER_ENGINES must be an integer between 1 and 64 (got "0")');
    expect(c.stderr).toContain('PREFIX_ROUTER_EMF must be on or off (got "maybe")');
  });
});
