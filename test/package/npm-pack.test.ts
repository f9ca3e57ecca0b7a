/**
 * The two packages as users get them: `npm pack -w lib`, then `npm pack -w router` (their prepack scripts compile:
 * jsii for the construct, which also stages the router sidecar's build context, compiling the router into
 * router/dist; tsc for the router, the very same compile, which the router's pack takes from router/dist instead of
 * running it a second time: see `packBothPackages`), each installed into an empty project (from the npm cache when it
 * holds everything, `--prefer-offline`):
 *   - a CDK app installing the construct tarball gets aws-cdk-lib and constructs as peers and nothing of the router,
 *     synthesizes the endpoint, and `VllmImage.withRouterSidecar()` stages exactly the sidecar context as its asset;
 *   - a project installing the router tarball runs the documented `npx prefix-router simulate` on the shipped trace
 *     by name and loads the `cdk-prefix-aware-llm-router/client` subpath.
 * The newcomer's whole path in a fresh `cdk init` app (every snippet and command of the docs) is
 * test/installed/installed-app.test.ts, run by `npm run test:installed` (in .ci/run).
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { filesUnder } from './files-under';

const ROOT = join(__dirname, '..', '..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const CONSTRUCT = JSON.parse(readFileSync(join(ROOT, 'lib', 'package.json'), 'utf8')) as {
  name: string;
  peerDependencies: Record<string, string>;
};
const ROUTER = JSON.parse(readFileSync(join(ROOT, 'router', 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  dependencies: Record<string, string>;
};

interface Packed {
  name: string;
  filename: string;
  files: { path: string }[];
}

/** The router package's build script, and the compile of the same tsconfig that lib's prepack stages the sidecar with. */
const ROUTER_BUILD = 'rm -rf dist && tsc -p tsconfig.build.json';
const SIDECAR_ROUTER_BUILD = 'rm -rf router/dist && node node_modules/typescript/bin/tsc -p router/tsconfig.build.json';

/** The first `npm` on PATH. */
function realNpm(): string {
  const found = (process.env.PATH ?? '')
    .split(delimiter)
    .map((dir) => join(dir, NPM))
    .find((path) => existsSync(path));
  if (found === undefined) throw new Error(`no ${NPM} on PATH`);
  return found;
}

/**
 * Packs the construct, then the router, each with its own prepack and postpack. The construct's prepack compiles the
 * router into router/dist (`SIDECAR_ROUTER_BUILD`, in router/scripts/stage-sidecar-context.sh) and leaves it there;
 * the router's prepack is `npm run build && …`, and its build is that same compile of router/tsconfig.build.json
 * (`ROUTER_BUILD`, checked here against both files). So the router's pack runs its prepack with an `npm` in front
 * of PATH that answers `npm run build` with the router/dist just compiled and passes everything else to npm: one
 * compile of the router instead of two (about 22 s of CPU), and the tarball holds what its own build writes.
 */
function packBothPackages(work: string): Packed[] {
  const routerScripts = (
    JSON.parse(readFileSync(join(ROOT, 'router', 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    }
  ).scripts;
  expect(routerScripts.build).toBe(ROUTER_BUILD);
  expect(routerScripts.prepack).toMatch(/^npm run build && /);
  expect(readFileSync(join(ROOT, 'router', 'scripts', 'stage-sidecar-context.sh'), 'utf8')).toContain(
    SIDECAR_ROUTER_BUILD,
  );
  const packed = (workspace: string, env: Record<string, string> = {}): Packed[] => {
    const printed = run(NPM, ['pack', '--json', '-w', workspace, '--pack-destination', work], ROOT, 420_000, env);
    // Lifecycle scripts (jsii, tsc) print before npm's JSON.
    return JSON.parse(printed.slice(printed.search(/^\[/m))) as Packed[];
  };
  const construct = packed('lib');
  expect(existsSync(join(ROOT, 'router', 'dist', 'bin', 'prefix-router.js'))).toBe(true);
  const shim = join(work, 'npm-with-router-built');
  mkdirSync(shim);
  writeFileSync(
    join(shim, 'npm'),
    `#!/bin/sh\n[ "$1" = run ] && [ "$2" = build ] && [ "$#" = 2 ] && exit 0\nexec '${realNpm()}' "$@"\n`,
    { mode: 0o755 },
  );
  return [...construct, ...packed('router', { PATH: `${shim}${delimiter}${process.env.PATH ?? ''}` })];
}

function run(cmd: string, args: string[], cwd: string, timeoutMs: number, env: Record<string, string> = {}): string {
  return execFileSync(cmd, args, {
    cwd,
    timeout: timeoutMs,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, npm_config_update_notifier: 'false', ...env },
  });
}

function emptyProject(dir: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'empty-project', version: '1.0.0', private: true }));
  return dir;
}

jest.setTimeout(600_000);

describe('when the construct and router packages are packed and installed into empty projects', () => {
  const work = mkdtempSync(join(tmpdir(), 'npm-pack-'));
  let construct: Packed;
  let router: Packed;

  afterAll(() => rmSync(work, { recursive: true, force: true }));

  /** One CDK app with the construct tarball installed, shared by the tests that use it (an install takes seconds). */
  let cdkApp: string | undefined;
  function appWithConstruct(): string {
    if (cdkApp === undefined) {
      const app = emptyProject(join(work, 'cdk-app'));
      run(
        NPM,
        ['install', '--prefer-offline', '--no-audit', '--no-fund', join(work, construct.filename)],
        app,
        300_000,
      );
      cdkApp = app;
    }
    return cdkApp;
  }

  beforeAll(() => {
    const packed = packBothPackages(work);
    construct = packed.find((p) => p.name === CONSTRUCT.name)!;
    router = packed.find((p) => p.name === ROUTER.name)!;
  });

  test('GIVEN the construct tarball THEN it holds the jsii assembly, the compiled library, the staged sidecar context, LICENSE and NOTICE, and no sources or maps', () => {
    const paths = construct.files.map((f) => f.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        '.jsii',
        'dist/index.js',
        'dist/index.d.ts',
        'LICENSE',
        'NOTICE',
        'README.md',
        'package.json',
        'sidecar/package.json',
        'sidecar/npm-shrinkwrap.json',
        'sidecar/router/Dockerfile',
        'sidecar/router/entrypoint.sh',
        'sidecar/router/image-build.sh',
        'sidecar/dist/bin/prefix-router.js',
      ]),
    );
    expect(
      paths.filter(
        (p) => p.endsWith('.map') || (p.endsWith('.ts') && !p.endsWith('.d.ts')) || p.startsWith('sidecar/router/src'),
      ),
    ).toEqual([]);
    expect(paths.filter((p) => p.startsWith('sidecar/') && p.endsWith('.d.ts'))).toEqual([]);
    expect(readFileSync(join(ROOT, 'NOTICE'), 'utf8')).toMatch(
      /kvcache-ai\/Mooncake[\s\S]*Apache License, Version 2\.0/,
    );
  });

  test('GIVEN the router tarball THEN it holds the CLI, the client subpath, the shipped traces and each profile once, and no benchmarks, tests or maps', () => {
    const paths = router.files.map((f) => f.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'LICENSE',
        'NOTICE',
        'package.json',
        'README.md',
        'client/package.json',
        'dist/bin/prefix-router.js',
        'dist/router/src/aws/client.js',
        'dist/router/src/aws/client.d.ts',
        'traces/mooncake-synthetic.jsonl',
      ]),
    );
    expect(
      paths.filter(
        (p) =>
          p.endsWith('.map') ||
          p.startsWith('dist/router/bench/') ||
          p.startsWith('dist/test/') ||
          p.startsWith('dist/lib/'),
      ),
    ).toEqual([]);
    const profiles = paths.filter((p) => /profiles\/[^/]+\.json$/.test(p)).map((p) => p.slice(p.lastIndexOf('/') + 1));
    expect(profiles.length).toBeGreaterThan(0);
    expect(new Set(profiles).size).toBe(profiles.length);
  });

  test('GIVEN a CDK app WHEN the construct tarball is installed THEN it gets the peers and nothing of the router, synthesizes, and stages exactly the sidecar context', () => {
    const app = appWithConstruct();
    for (const peer of Object.keys(CONSTRUCT.peerDependencies))
      expect({ peer, installed: existsSync(join(app, 'node_modules', peer)) }).toEqual({ peer, installed: true });
    for (const dependency of Object.keys(ROUTER.dependencies)) {
      expect({ dependency, installed: existsSync(join(app, 'node_modules', dependency)) }).toEqual({
        dependency,
        installed: false,
      });
    }
    expect(existsSync(join(app, 'node_modules', '.bin', 'prefix-router'))).toBe(false);

    writeFileSync(
      join(app, 'synth.js'),
      `const { App, Stack } = require('aws-cdk-lib');
const { Template } = require('aws-cdk-lib/assertions');
const { ModelSource, PrefixAwareLlmEndpoint, RouterSidecarMode, VllmImage } = require('${CONSTRUCT.name}');
const app = new App({ outdir: process.argv[2] });
const stack = new Stack(app, 'LlmStack', { env: { account: '111111111111', region: 'us-east-1' } });
new PrefixAwareLlmEndpoint(stack, 'Llm', { model: ModelSource.huggingFace('Qwen/Qwen2.5-7B-Instruct') });
new PrefixAwareLlmEndpoint(stack, 'Sidecar', {
  model: ModelSource.huggingFace('Qwen/Qwen2.5-7B-Instruct'),
  image: VllmImage.withRouterSidecar({ mode: RouterSidecarMode.MULTI_ENGINE, engines: 8 }),
});
const configs = Template.fromStack(stack).findResources('AWS::SageMaker::EndpointConfig');
app.synth();
process.stdout.write(JSON.stringify(Object.values(configs).map((c) => c.Properties.ProductionVariants[0].RoutingConfig)));
`,
    );
    const out = join(work, 'cdk.out');
    const routing = JSON.parse(run(process.execPath, ['synth.js', out], app, 120_000)) as unknown[];
    expect(routing).toEqual([
      expect.objectContaining({ RoutingStrategy: 'PREFIX_AWARE' }),
      expect.objectContaining({ RoutingStrategy: 'PREFIX_AWARE' }),
    ]);

    // The Docker image asset cdk synth staged: the sidecar context the tarball carries, file for file.
    const assets = JSON.parse(readFileSync(join(out, 'LlmStack.assets.json'), 'utf8')) as {
      dockerImages: Record<string, { source: { directory: string; dockerFile: string } }>;
    };
    const images = Object.values(assets.dockerImages);
    expect(images).toHaveLength(1);
    expect(images[0].source.dockerFile).toBe('router/Dockerfile');
    const staged = join(out, images[0].source.directory);
    const carried = construct.files
      .map((f) => f.path)
      .filter((p) => p.startsWith('sidecar/'))
      .map((p) => p.slice('sidecar/'.length))
      .sort();
    expect(filesUnder(staged)).toEqual(carried);
    expect(JSON.parse(readFileSync(join(staged, 'package.json'), 'utf8'))).toEqual(
      expect.objectContaining({ name: ROUTER.name, dependencies: ROUTER.dependencies }),
    );
    expect(statSync(join(staged, 'router', 'entrypoint.sh')).mode & 0o111).not.toBe(0);
  });

  test('GIVEN a CDK app with the construct tarball THEN synth checks sidecar settings with the router the tarball carries, and states the hourly price', () => {
    const app = appWithConstruct();
    writeFileSync(
      join(app, 'checks.js'),
      `const { App, Stack } = require('aws-cdk-lib');
const { Annotations, Match } = require('aws-cdk-lib/assertions');
const { InstanceType, ModelSource, PrefixAwareLlmEndpoint, VllmImage } = require('${CONSTRUCT.name}');
const model = ModelSource.huggingFace('Qwen/Qwen2.5-7B-Instruct');
let refused = '';
try {
  new PrefixAwareLlmEndpoint(new Stack(new App(), 'Bad'), 'Llm', { model, instanceType: InstanceType.ML_G6E_2XLARGE, image: VllmImage.withRouterSidecar({ policy: 'cache-awre' }) });
} catch (err) {
  refused = err.message;
}
const stack = new Stack(new App(), 'Priced');
new PrefixAwareLlmEndpoint(stack, 'Llm', { model, instanceType: InstanceType.ML_G6E_2XLARGE });
const infos = Annotations.fromStack(stack).findInfo('*', Match.stringLikeRegexp('Endpoint price')).map((i) => i.entry.data);
process.stdout.write(JSON.stringify({ refused, infos }));
`,
    );
    const { refused, infos } = JSON.parse(run(process.execPath, ['checks.js'], app, 120_000)) as {
      refused: string;
      infos: string[];
    };
    // The message comes from sidecar/dist/router/src/container/container-config.js: the router's own parser, shipped.
    expect(refused).toContain('image.policy (PREFIX_ROUTER_POLICY) must be one of sagemaker-prefix-aware, cache-aware');
    expect(infos).toEqual([expect.stringContaining('Endpoint price: 2 × ml.g6e.2xlarge at $2.6/instance-hour')]);
    expect(construct.files.map((f) => f.path)).toEqual(
      expect.arrayContaining([
        'sidecar/dist/router/src/container/container-config.js',
        'sidecar/dist/router/src/common/instance-prices.js',
      ]),
    );
  });

  test('GIVEN an empty project WHEN the router tarball is installed THEN npx prefix-router prints its version, simulates the shipped trace by name and the client subpath loads', () => {
    const project = emptyProject(join(work, 'router-project'));
    run(NPM, ['install', '--prefer-offline', '--no-audit', '--no-fund', join(work, router.filename)], project, 300_000);
    expect(existsSync(join(project, 'node_modules', 'aws-cdk-lib'))).toBe(false);
    expect(run('npx', ['--no-install', 'prefix-router', '--version'], project, 60_000)).toBe(`${ROUTER.version}\n`);

    const out = join(project, 'report');
    const printed = run(
      'npx',
      [
        '--no-install',
        'prefix-router',
        'simulate',
        '--workload',
        'trace:mooncake-synthetic?count=40',
        '--instances',
        '2',
        '--policy',
        'random',
        '--policy',
        'sagemaker-prefix-aware',
        '--out',
        out,
        '--quiet',
      ],
      project,
      120_000,
    );
    expect(printed).toContain('report:');
    expect(readdirSync(out).sort()).toEqual(expect.arrayContaining(['report.html', 'report.json', 'report.md']));
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as { strategies: { requests: number }[] };
    expect(report.strategies.map((s) => s.requests)).toEqual([40, 40]);

    const exported = run(
      process.execPath,
      [
        '-e',
        `const c = require('${ROUTER.name}/client'); process.stdout.write([typeof c.PrefixAwareLlmClient, typeof c.LlmThrottledError, typeof c.createRuntimeClient].join(','))`,
      ],
      project,
      60_000,
    );
    expect(exported).toBe('function,function,function');
  });
});
