/**
 * The package as users get it: `npm pack`, installed into an empty project (from the npm cache when it holds
 * everything, `--prefer-offline`), then the documented `npx prefix-router simulate` on the shipped trace by name
 * and a CDK stack synthesized from the installed construct. Needs a compiled dist/ (`npm test` compiles first;
 * alone, this test compiles incrementally).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; files: string[] };

function run(cmd: string, args: string[], cwd: string, timeoutMs: number): string {
  return execFileSync(cmd, args, { cwd, timeout: timeoutMs, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_update_notifier: 'false' } });
}

jest.setTimeout(420_000);

describe('when the package is packed and installed into an empty project', () => {
  const work = mkdtempSync(join(tmpdir(), 'npm-pack-'));
  let packed: string[] = [];
  let tarball = '';

  beforeAll(() => {
    run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], ROOT, 300_000);
    const out = JSON.parse(run(NPM, ['pack', '--json', '--pack-destination', work], ROOT, 120_000)) as { filename: string; files: { path: string }[] }[];
    packed = out[0].files.map((f) => f.path);
    tarball = join(work, out[0].filename);
  });

  test('GIVEN the files list THEN every entry exists and is packed', () => {
    for (const entry of pkg.files.filter((f) => !f.startsWith('!'))) {
      expect({ entry, exists: existsSync(join(ROOT, entry)) }).toEqual({ entry, exists: true });
      expect({ entry, packed: packed.some((p) => p === entry || p.startsWith(`${entry}/`)) }).toEqual({ entry, packed: true });
    }
  });

  test('GIVEN the tarball THEN it holds LICENSE and NOTICE, no source maps, no benchmarks or tests, and each profile once', () => {
    expect(packed).toEqual(expect.arrayContaining(['LICENSE', 'NOTICE', 'package.json', 'README.md', 'router/traces/mooncake-synthetic.jsonl']));
    expect(readFileSync(join(ROOT, 'LICENSE'), 'utf8')).toContain('Apache License\n                           Version 2.0, January 2004');
    expect(readFileSync(join(ROOT, 'NOTICE'), 'utf8')).toMatch(/kvcache-ai\/Mooncake[\s\S]*Apache License, Version 2\.0/);
    // Maps point at .ts sources that are not shipped: ship neither.
    expect(packed.filter((p) => p.endsWith('.map'))).toEqual([]);
    expect(packed.filter((p) => p.startsWith('dist/router/bench/') || p.startsWith('dist/test/'))).toEqual([]);
    const profiles = packed.filter((p) => /profiles\/[^/]+\.json$/.test(p)).map((p) => p.slice(p.lastIndexOf('/') + 1));
    expect(profiles.length).toBeGreaterThan(0);
    expect(new Set(profiles).size).toBe(profiles.length);
  });

  test('GIVEN an empty project WHEN the tarball is installed THEN npx prefix-router simulates the shipped trace by name and the construct synthesizes', () => {
    const project = join(work, 'project');
    run('mkdir', ['-p', project], work, 5_000);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'empty-project', version: '1.0.0', private: true }));
    run(NPM, ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], project, 300_000);
    expect(existsSync(join(project, 'node_modules', pkg.name, 'router', 'traces', 'mooncake-synthetic.jsonl'))).toBe(true);

    const out = join(project, 'report');
    const printed = run(
      'npx',
      ['--no-install', 'prefix-router', 'simulate', '--workload', 'trace:mooncake-synthetic?count=40', '--instances', '2', '--policy', 'random', '--policy', 'sagemaker-prefix-aware', '--out', out, '--quiet'],
      project,
      120_000,
    );
    expect(printed).toContain('report:');
    expect(readdirSync(out).sort()).toEqual(expect.arrayContaining(['report.html', 'report.json', 'report.md']));
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as { strategies: { requests: number }[] };
    expect(report.strategies.map((s) => s.requests)).toEqual([40, 40]);

    writeFileSync(
      join(project, 'synth.js'),
      `const { App, Stack } = require('aws-cdk-lib');
const { Template } = require('aws-cdk-lib/assertions');
const { ModelSource, PrefixAwareLlmEndpoint } = require('${pkg.name}');
const stack = new Stack(new App(), 'LlmStack', { env: { account: '111111111111', region: 'us-east-1' } });
new PrefixAwareLlmEndpoint(stack, 'Llm', { model: ModelSource.huggingFace('Qwen/Qwen2.5-7B-Instruct') });
const configs = Template.fromStack(stack).findResources('AWS::SageMaker::EndpointConfig');
process.stdout.write(JSON.stringify(Object.values(configs).map((c) => c.Properties.ProductionVariants[0].RoutingConfig)));
`,
    );
    const routing = JSON.parse(run(process.execPath, ['synth.js'], project, 120_000)) as unknown[];
    expect(routing).toEqual([expect.objectContaining({ RoutingStrategy: 'PREFIX_AWARE' })]);
  });
});
