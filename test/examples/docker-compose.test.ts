import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadContainerConfig, planEngines } from '../../router/src/container';

/**
 * examples/docker-compose.yml cannot run here (no Docker engine in CI); what it hands the container can: each
 * service's environment goes through the supervisor's own validation and engine planning, and the cpu profile's
 * base image and engine command match what router/Dockerfile builds.
 */
const ROOT = join(__dirname, '..', '..');
const COMPOSE = readFileSync(join(ROOT, 'examples', 'docker-compose.yml'), 'utf8');
const DOCKERFILE = readFileSync(join(ROOT, 'router', 'Dockerfile'), 'utf8');

/** `key: value` lines of the block `name:` at `indent` inside a service (the file keeps to this simple shape). */
function block(service: string, name: string): Record<string, string> {
  const lines = COMPOSE.split('\n');
  const start = lines.indexOf(`  ${service}:`);
  expect(start).toBeGreaterThanOrEqual(0);
  const out: Record<string, string> = {};
  let inside = false;
  let indent = 0;
  for (const line of lines.slice(start + 1)) {
    if (/^ {2}\S/.test(line)) break; // next service
    const m = /^(\s*)([A-Za-z_][A-Za-z0-9_-]*):\s*(.*)$/.exec(line);
    if (m === null) continue;
    if (m[2] === name && m[3] === '') {
      inside = true;
      indent = m[1].length;
      continue;
    }
    if (inside && m[1].length <= indent) break;
    if (inside) out[m[2]] = m[3].replace(/^"(.*)"$/, '$1');
  }
  return out;
}

describe('when examples/docker-compose.yml is read', () => {
  it('GIVEN the cpu profile THEN its settings pass the supervisor and plan three emulated engines without GPUs', () => {
    const env = block('prefix-router-cpu', 'environment');
    const { settings, warnings } = loadContainerConfig(env);
    expect(warnings).toEqual([]);
    expect(settings).toMatchObject({ mode: 'multi-engine', engines: 3, gpus: 0 });
    const plan = planEngines(settings, { ids: [], source: 'PREFIX_ROUTER_GPUS' }, [8100, 8101, 8102], env);
    expect(plan[2].argv).toEqual([
      '/usr/local/bin/node',
      '/opt/prefix-router/dist/bin/prefix-router.js',
      'emulate',
      '--instances',
      '1',
      '--port',
      '8102',
      '--profile',
      'tiny',
      '--log-level',
      'warn',
    ]);
    // The paths the command uses are where router/Dockerfile puts node and the compiled CLI.
    expect(DOCKERFILE).toContain('COPY --from=node /usr/local/bin/node /usr/local/bin/node');
    expect(DOCKERFILE).toMatch(/WORKDIR \/opt\/prefix-router\n[\s\S]*COPY --from=build \/src\/dist\/bin \.\/dist\/bin/);
  });

  it("GIVEN the cpu profile's base image THEN it is the Dockerfile's own Node image, so no GPU image is pulled", () => {
    expect(block('prefix-router-cpu', 'args').BASE_IMAGE).toBe(/^ARG NODE_IMAGE=(.*)$/m.exec(DOCKERFILE)![1]);
  });

  it('GIVEN the gpu profile THEN its settings pass the supervisor and split 8 GPUs into four tensor-parallel-2 vLLM engines', () => {
    const env = block('prefix-router-gpu', 'environment');
    const { settings } = loadContainerConfig(env);
    const plan = planEngines(
      settings,
      { ids: ['0', '1', '2', '3', '4', '5', '6', '7'], source: 'nvidia-smi' },
      [8100, 8101, 8102, 8103],
      env,
    );
    expect(plan.map((e) => e.env.CUDA_VISIBLE_DEVICES)).toEqual(['0,1', '2,3', '4,5', '6,7']);
    expect(plan[0].argv.slice(0, 3)).toEqual(['python3', '-m', 'vllm.entrypoints.openai.api_server']);
    expect(plan[0].argv.join(' ')).toContain('--model Qwen/Qwen2.5-7B-Instruct');
    expect(plan[0].argv.join(' ')).toContain('--tensor-parallel-size 2');
  });
});
