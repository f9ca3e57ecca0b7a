/**
 * The newcomer's path as a package user walks it, outside the repository: `npm pack` both packages (their prepack
 * scripts compile: jsii for the construct, tsc for the router), make an app with `cdk init app --language
 * typescript` (its layout: bin/, lib/, cdk.json, tsconfig.json; its install step replaced by the versions this
 * repository pins, so everything comes from the npm cache `npm ci` filled), install both tarballs, and there:
 *   - every TypeScript snippet of the README, docs/ and the packages' READMEs compiles with the app's own tsconfig
 *     (test/docs/documented-snippets.ts says which are programs, CDK apps or sketches);
 *   - every CDK snippet synthesizes, names its instance type, serves a model whose attention heads its tensor
 *     parallelism divides, and states its hourly cost as the synthesized fleet and the project's price list give it;
 *   - the example stacks, copied into lib/ with their import changed to the package (docs/construct.md#examples),
 *     synthesize;
 *   - `prefix-router plan` from the installed CLI, on the smallest workload and search that still plans a SageMaker
 *     fleet: exactly what it printed, saved as a bin/ file, compiles with the others and synthesizes to the planned
 *     model, type, count, routing and engine settings, billing what plan billed;
 *   - `npx cdk synth` runs the README's snippet as the app's bin/ file through cdk.json;
 *   - every documented command a package user can copy (no checkout, build, Docker or AWS CLI in it) runs, its
 *     `npx -p cdk-prefix-aware-llm-router prefix-router` through the real npx, offline, so that only the installed
 *     package can serve it, bounded as test/docs/documented-commands.ts bounds them; afterwards the app's bin/ and
 *     lib/ are unchanged and the reports are under ./prefix-router-reports/.
 * Not in `npm test`: on the 2-core machine this file took 227 s (an early version, load average about 15) and 732 s
 * wall, 3 min 22 s CPU (the final version, load average 20: the install from the cache 43 s, the eight CDK snippets'
 * synths 160 s, the documented commands 4 min), against a suite that takes about 7 of its 10 minutes. `npm test` keeps what fails most often: test/package/npm-pack.test.ts (what the tarballs hold, peers,
 * the CLI from an installed tarball) and test/docs/documented-commands.test.ts (every command against the build).
 * `npm run test:installed` runs this file; .ci/run runs it after `npm test`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LIST_PRICE_USD_PER_HOUR } from '../../router/src/aws/ab-plan';
import { BUILT_IN_PRICE_SOURCE } from '../../router/src/cli/plan-command';
import type { PlanReport } from '../../router/src/plan/plan-report';
import {
  documentedBlocks,
  freeRange,
  notRunReason,
  prepareBlock,
  ROUTER_PACKAGE,
  runBlockScript,
  runnableBlocks,
  type ShellBlock,
} from '../docs/documented-commands';
import {
  CONSTRUCT_PACKAGE,
  documentedSnippets,
  SKETCHES,
  snippetFileName,
  statedHourlyCost,
  type TsSnippet,
} from '../docs/documented-snippets';
import { filesUnder } from '../package/files-under';

const ROOT = join(__dirname, '..', '..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

interface Packed {
  name: string;
  filename: string;
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

jest.setTimeout(600_000);

/**
 * Attention heads of each model a snippet serves (`num_attention_heads` in the model's config.json on Hugging Face).
 * vLLM refuses to start when the tensor-parallel size does not divide them ("Total number of attention heads (28)
 * must be divisible by tensor parallel size (8)": ModelConfig.verify_with_parallel_config in vllm/config), which
 * on SageMaker happens only after the instances are provisioned and billed.
 */
const ATTENTION_HEADS: Readonly<Record<string, number>> = {
  'Qwen/Qwen2.5-7B-Instruct': 28, // https://huggingface.co/Qwen/Qwen2.5-7B-Instruct/blob/main/config.json
  'meta-llama/Llama-3.1-70B-Instruct': 64, // https://huggingface.co/meta-llama/Llama-3.1-70B-Instruct/blob/main/config.json
};

/** A documented command a package user can copy: no checkout, build, Docker, AWS CLI or repository path in it. */
const CLONE_ONLY =
  /\bnpm (?:ci|test|run)\b|\bnode (?:dist|router)\/|\$\{?PR\b|\bdocker\b|\bgit\b|\baws [a-z]|(?:^|[\s'"=:(])(?:\.\/)?(?:router|examples|bin|lib|test)\/[\w.-]/m;
const userBlocks = runnableBlocks(documentedBlocks(ROOT)).filter(
  (b) => notRunReason(b) === undefined && !CLONE_ONLY.test(b.text),
);
const snippets = documentedSnippets(ROOT);

/**
 * The smallest plan that still ends in a SageMaker app file: the README's model on its instance type (a derived
 * profile), one PREFIX_AWARE setting at one size, a 30-s workload, no autoscaling windows: one simulation.
 */
const PLAN_ARGS = [
  'plan',
  '--model',
  'Qwen/Qwen2.5-7B-Instruct',
  '--instance-type',
  'ml.g6e.2xlarge',
  '--workload',
  'long-context?groups=4&duration=30&rate=1',
  '--slo',
  'p90-ttft<=5s',
  '--instances',
  '2..2',
  '--policy',
  'sagemaker-prefix-aware?prefixLength=8192&concurrencyThreshold=32',
  '--window',
  '0',
  '--jobs',
  '1',
];
/** Where plan's printed app lives in the app (a bin/ file, as a user would save it). */
const PLANNED_APP = 'planned-app.ts';

/** The app file `plan` printed: its first `ts` block, exactly, and the line of its opening fence. */
function printedApp(stdout: string): { text: string; line: number } {
  const match = /^```ts\n([\s\S]*?)\n```$/m.exec(stdout);
  if (match === null) throw new Error(`plan printed no \`\`\`ts block:\n${stdout}`);
  return { text: match[1], line: stdout.slice(0, match.index).split('\n').length };
}

/** Every file under the app's source folders with its content, to show a command wrote nothing there. */
function sourceTree(app: string): Record<string, string> {
  const tree: Record<string, string> = {};
  for (const folder of ['bin', 'lib'])
    for (const f of filesUnder(join(app, folder))) tree[`${folder}/${f}`] = readFileSync(join(app, folder, f), 'utf8');
  return tree;
}

describe('when both packages are packed and installed into a fresh `cdk init` app', () => {
  const work = mkdtempSync(join(tmpdir(), 'installed-app-'));
  let construct: Packed;
  let router: Packed;

  beforeAll(() => {
    const printed = run(
      NPM,
      ['pack', '--json', '-w', 'lib', '-w', 'router', '--pack-destination', work],
      ROOT,
      420_000,
    );
    // Lifecycle scripts (jsii, tsc) print before npm's JSON.
    const packed = JSON.parse(printed.slice(printed.search(/^\[/m))) as Packed[];
    construct = packed.find((p) => p.name === CONSTRUCT_PACKAGE)!;
    router = packed.find((p) => p.name === ROUTER_PACKAGE)!;
  });

  afterAll(() => rmSync(work, { recursive: true, force: true }));

  describe('when the app is made and installed', () => {
    const app = join(work, 'my-llm-app');
    const build = join(app, 'build'); // inside the app, so its node_modules resolve; tsc leaves its outDir out of the inputs
    let installSeconds = 0;
    let snippetFiles: Map<string, TsSnippet>;
    let planReport: PlanReport;

    beforeAll(() => {
      // `cdk init`'s own layout (bin/, lib/, cdk.json, tsconfig.json), without its install step.
      mkdirSync(app);
      run(
        process.execPath,
        [
          join(ROOT, 'node_modules', 'aws-cdk', 'bin', 'cdk'),
          'init',
          'app',
          '--language',
          'typescript',
          '--generate-only',
        ],
        app,
        60_000,
      );
      const pkg = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as {
        dependencies: Record<string, string>;
        devDependencies: Record<string, string>;
      };
      const workspace = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
        devDependencies: Record<string, string>;
      };
      const pinned = (name: string) => workspace.devDependencies[name];
      // The versions this repository pins (in the npm cache after `npm ci`) instead of the template's ranges, and
      // ts-node for `cdk.json`'s app (the template's tsx and its test runner are not needed to synthesize).
      pkg.dependencies = {
        'aws-cdk-lib': pinned('aws-cdk-lib'),
        constructs: pinned('constructs'),
        [CONSTRUCT_PACKAGE]: `file:../${construct.filename}`,
      };
      pkg.devDependencies = {
        [ROUTER_PACKAGE]: `file:../${router.filename}`,
        '@types/node': pinned('@types/node'),
        'aws-cdk': pinned('aws-cdk'),
        openai: pinned('openai'),
        'ts-node': pinned('ts-node'),
        typescript: pinned('typescript'),
      };
      writeFileSync(join(app, 'package.json'), JSON.stringify(pkg, null, 2));
      const tsconfig = JSON.parse(readFileSync(join(app, 'tsconfig.json'), 'utf8')) as {
        compilerOptions: { types: string[] };
        exclude: string[];
      };
      tsconfig.compilerOptions.types = ['node'];
      writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
      rmSync(join(app, 'test'), { recursive: true, force: true });
      const cdkJson = JSON.parse(readFileSync(join(app, 'cdk.json'), 'utf8')) as { app: string };
      cdkJson.app = 'npx ts-node --prefer-ts-exts bin/my-llm-app.ts';
      writeFileSync(join(app, 'cdk.json'), JSON.stringify(cdkJson, null, 2));

      const started = Date.now();
      run(NPM, ['install', '--prefer-offline', '--no-audit', '--no-fund'], app, 300_000);
      installSeconds = (Date.now() - started) / 1000;

      // Each snippet as its own bin/ file; the README's is the app itself (cdk.json runs it).
      snippetFiles = new Map();
      for (const snippet of snippets.filter((s) => s.kind !== 'sketch')) {
        const name =
          snippet.file === 'README.md' &&
          snippet.kind === 'cdk-app' &&
          ![...snippetFiles.values()].some((s) => s.file === 'README.md' && s.kind === 'cdk-app')
            ? 'my-llm-app.ts'
            : snippetFileName(snippet);
        snippetFiles.set(name, snippet);
        writeFileSync(join(app, 'bin', name), `${snippet.text}\n`);
      }
      // The example stacks, copied as docs/construct.md#examples says: into lib/, importing the package.
      mkdirSync(join(app, 'lib', 'examples'));
      for (const f of readdirSync(join(ROOT, 'examples')).filter((f) => f.endsWith('.ts'))) {
        writeFileSync(
          join(app, 'lib', 'examples', f),
          readFileSync(join(ROOT, 'examples', f), 'utf8').replace(/'\.\.\/lib(?:\/index)?'/g, `'${CONSTRUCT_PACKAGE}'`),
        );
      }
      // `plan` from the installed CLI; what it printed goes into the app as it is, a CDK app like the docs' ones.
      const planOut = join(work, 'plan-out');
      const planned = printedApp(
        run(join(app, 'node_modules', '.bin', 'prefix-router'), [...PLAN_ARGS, '--out', planOut], app, 180_000),
      );
      planReport = JSON.parse(readFileSync(join(planOut, 'report.json'), 'utf8')) as PlanReport;
      snippetFiles.set(PLANNED_APP, {
        file: `prefix-router ${PLAN_ARGS.join(' ')} (stdout)`,
        line: planned.line,
        text: planned.text,
        kind: 'cdk-app',
      });
      writeFileSync(join(app, 'bin', PLANNED_APP), `${planned.text}\n`);
      writeFileSync(
        join(app, 'bin', 'examples.ts'),
        `import { App } from 'aws-cdk-lib';\nimport { addExampleStacks } from '../lib/examples';\n\naddExampleStacks(new App());\n`,
      );
    });

    test('GIVEN the install THEN it came from the npm cache in bounded time and put the CLI on npx', () => {
      process.stdout.write(`npm install of both tarballs and the app's dependencies: ${installSeconds.toFixed(1)} s\n`);
      expect(installSeconds).toBeLessThan(300);
      expect(existsSync(join(app, 'node_modules', '.bin', 'prefix-router'))).toBe(true);
    });

    test('GIVEN the docs THEN every TypeScript snippet is a program, a CDK app or a listed sketch, and each sketch matches exactly one block', () => {
      for (const sketch of SKETCHES) {
        expect({
          sketch: sketch.contains,
          matches: snippets.filter((s) => s.file === sketch.file && s.text.includes(sketch.contains)).length,
        }).toEqual({ sketch: sketch.contains, matches: 1 });
      }
      expect(snippets.filter((s) => s.kind === 'cdk-app').length).toBeGreaterThanOrEqual(5);
      expect(snippets.some((s) => s.file === 'README.md' && s.kind === 'cdk-app')).toBe(true);
    });

    test("GIVEN every snippet and example in the app WHEN compiled with the app's tsconfig THEN tsc reports nothing", () => {
      let output = '';
      try {
        run(
          process.execPath,
          [
            join(app, 'node_modules', 'typescript', 'bin', 'tsc'),
            '-p',
            'tsconfig.json',
            '--noEmit',
            'false',
            '--outDir',
            build,
          ],
          app,
          300_000,
        );
      } catch (error) {
        output = String((error as { stdout?: string }).stdout ?? error);
      }
      // Name each error by the doc and line it comes from.
      const located = output.replace(/^bin\/([\w.-]+\.ts)\((\d+),(\d+)\)/gm, (m, name: string, line: string) => {
        const snippet = snippetFiles.get(name);
        return snippet ? `${snippet.file}:${snippet.line + Number(line)}` : m;
      });
      expect(located).toBe('');
    });

    test("GIVEN every CDK snippet WHEN synthesized THEN it names an instance type, serves a model whose attention heads its tensor parallelism divides, and states what the fleet costs an hour with the price's source and date", () => {
      const cdkJson = JSON.parse(readFileSync(join(app, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
      const priceDate = /recorded (\d{4}-\d{2}-\d{2})/.exec(BUILT_IN_PRICE_SOURCE)![1];
      const priceUrl = /https:\/\/\S+\//.exec(BUILT_IN_PRICE_SOURCE)![0];
      const problems: string[] = [];
      const { InstanceType } = require(join(app, 'node_modules', CONSTRUCT_PACKAGE)) as {
        InstanceType: { of(name: string): { gpuCount?: number } };
      };
      const gpusOf = (type: string) => InstanceType.of(type).gpuCount ?? Number.NaN;
      const instanceTypeOf = (resources: Record<string, { Type: string; Properties: Record<string, any> }>) =>
        Object.values(resources).find((r) => r.Type === 'AWS::SageMaker::EndpointConfig')!.Properties
          .ProductionVariants[0].InstanceType as string;
      for (const [name, snippet] of snippetFiles) {
        if (snippet.kind !== 'cdk-app') continue;
        const where = `${snippet.file}:${snippet.line}`;
        if (!/new App\(/.test(snippet.text)) problems.push(`${where}: keeps no App (a complete bin/ file creates one)`);
        if (!/instanceType:/.test(snippet.text))
          problems.push(`${where}: names no instanceType (the default is 2 × ml.p5.48xlarge)`);
        const out = join(work, 'snippet-out', name);
        run(process.execPath, [join(build, 'bin', name.replace(/\.ts$/, '.js'))], app, 120_000, {
          CDK_OUTDIR: out,
          CDK_CONTEXT_JSON: JSON.stringify(cdkJson.context),
        });
        const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as {
          artifacts: Record<string, { type: string; properties?: { templateFile: string } }>;
        };
        let hourly = 0;
        for (const artifact of Object.values(manifest.artifacts).filter((a) => a.type === 'aws:cloudformation:stack')) {
          const resources = (
            JSON.parse(readFileSync(join(out, artifact.properties!.templateFile), 'utf8')) as {
              Resources: Record<string, { Type: string; Properties: Record<string, any> }>;
            }
          ).Resources;
          for (const r of Object.values(resources)) {
            if (r.Type === 'AWS::SageMaker::Model') {
              for (const container of [r.Properties.PrimaryContainer, ...(r.Properties.Containers ?? [])].filter(
                Boolean,
              )) {
                const env = (container.Environment ?? {}) as Record<string, string>;
                const model = env.SM_VLLM_MODEL ?? env.HF_MODEL_ID ?? env.OPTION_MODEL_ID;
                // Multi-engine sidecar: each engine gets GPUs ÷ engines and that tensor parallelism (router/src/container/engine-plan.ts).
                const engines = env.PREFIX_ROUTER_ENGINES === undefined ? undefined : Number(env.PREFIX_ROUTER_ENGINES);
                const tp =
                  engines !== undefined
                    ? gpusOf(instanceTypeOf(resources)) / engines
                    : Number(env.SM_VLLM_TENSOR_PARALLEL_SIZE ?? env.OPTION_TENSOR_PARALLEL_DEGREE ?? 1);
                if (typeof model !== 'string' || model.startsWith('/')) continue; // a model from S3: its config is the user's
                const heads = ATTENTION_HEADS[model];
                if (heads === undefined)
                  problems.push(
                    `${where}: serves ${model}, whose attention heads this test does not know; add them to ATTENTION_HEADS`,
                  );
                else if (heads % tp !== 0)
                  problems.push(
                    `${where}: ${model} has ${heads} attention heads, which tensor parallelism ${tp} does not divide: vLLM exits after the instances start`,
                  );
              }
            }
            if (r.Type === 'AWS::SageMaker::EndpointConfig') {
              for (const variant of r.Properties.ProductionVariants as {
                InstanceType: string;
                InitialInstanceCount: number;
              }[]) {
                const price = LIST_PRICE_USD_PER_HOUR[variant.InstanceType];
                if (price === undefined)
                  problems.push(
                    `${where}: ${variant.InstanceType} has no recorded price (router/src/common/instance-prices.ts): use a priced type or record its price with its source`,
                  );
                else hourly += price * variant.InitialInstanceCount;
              }
            }
          }
        }
        const stated = statedHourlyCost(snippet.text);
        if (stated === undefined)
          problems.push(
            `${where}: states no hourly cost ("// Cost while deployed: N × TYPE ≈ $X/h (…)"); synthesized: ≈ $${hourly.toFixed(2)}/h`,
          );
        else if (Math.abs(stated.usdPerHour - hourly) > 0.005)
          problems.push(
            `${where}: states ≈ $${stated.usdPerHour}/h for ${stated.fleet}; the synthesized fleet costs ≈ $${hourly.toFixed(2)}/h`,
          );
        if (!snippet.text.includes(priceDate) || !snippet.text.includes(priceUrl))
          problems.push(
            `${where}: the cost names neither the price list's date (${priceDate}) nor its page (${priceUrl})`,
          );
      }
      expect(problems).toEqual([]);
    });

    test('GIVEN the app file plan printed, pasted as it is WHEN synthesized THEN it is the planned fleet: model, type, count, routing, engine settings, and the monthly bill plan stated', () => {
      const construct = planReport.construct!;
      expect(construct).not.toBeNull();
      // The CDK snippets' test synthesized it already (as every documented app); alone (-t), it synthesizes here.
      const out = join(work, 'snippet-out', PLANNED_APP);
      if (!existsSync(join(out, 'manifest.json'))) {
        const cdkJson = JSON.parse(readFileSync(join(app, 'cdk.json'), 'utf8')) as { context: unknown };
        run(process.execPath, [join(build, 'bin', PLANNED_APP.replace(/\.ts$/, '.js'))], app, 120_000, {
          CDK_OUTDIR: out,
          CDK_CONTEXT_JSON: JSON.stringify(cdkJson.context),
        });
      }
      const template = JSON.parse(readFileSync(join(out, 'PlannedLlmStack.template.json'), 'utf8')) as {
        Resources: Record<string, { Type: string; Properties: Record<string, any> }>;
        Outputs: Record<string, { Value: string }>;
      };
      const ofType = (type: string) => Object.values(template.Resources).filter((r) => r.Type === type);
      const variant = ofType('AWS::SageMaker::EndpointConfig')[0].Properties.ProductionVariants[0];
      expect(variant).toMatchObject({
        InstanceType: planReport.instanceType,
        InitialInstanceCount: construct.props.instanceCount,
        RoutingConfig: {
          RoutingStrategy: 'PREFIX_AWARE',
          PrefixAwareRoutingConfig: {
            PrefixLength: construct.props.routing.prefixLength,
            ConcurrencyThreshold: construct.props.routing.concurrencyThreshold,
          },
        },
      });
      const env = ofType('AWS::SageMaker::Model')[0].Properties.PrimaryContainer.Environment as Record<string, string>;
      expect(env).toMatchObject({ SM_VLLM_MODEL: 'Qwen/Qwen2.5-7B-Instruct', SM_VLLM_TENSOR_PARALLEL_SIZE: '1' });
      // The scheduler settings plan chose off vLLM's defaults (docs/plan.md#engine-settings), and only those.
      const engine = construct.props.engine ?? {};
      expect(env.SM_VLLM_MAX_NUM_BATCHED_TOKENS).toBe(engine.maxNumBatchedTokens?.toString());
      expect(env.SM_VLLM_LONG_PREFILL_TOKEN_THRESHOLD).toBe(engine.longPrefillTokenThreshold?.toString());
      const chosen = planReport.strategies.find((s) => s.label === construct.strategy)!;
      const monthly = `~$${Math.round(chosen.monthlyUsd!).toLocaleString('en-US')}/month at 730 h`;
      expect(Object.values(template.Outputs).map((o) => o.Value)).toEqual(
        expect.arrayContaining([expect.stringContaining(monthly)]),
      );
    });

    test("GIVEN the example stacks copied into the app WHEN synthesized THEN each stack of the repository's bin/app.ts is there", () => {
      const out = join(work, 'examples-out');
      run(process.execPath, [join(build, 'bin', 'examples.js')], app, 120_000, { CDK_OUTDIR: out });
      const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as {
        artifacts: Record<string, { type: string }>;
      };
      expect(
        Object.entries(manifest.artifacts)
          .filter(([, a]) => a.type === 'aws:cloudformation:stack')
          .map(([id]) => id)
          .sort(),
      ).toEqual([
        'PrefixAwareLlmBenchmarkReplica',
        'PrefixAwareLlmInferenceComponents',
        'PrefixAwareLlmMinimal',
        'PrefixAwareLlmPrivateVpc',
        'PrefixAwareLlmRouterSidecar',
        'PrefixAwareLlmRoutingAbVariants',
      ]);
    });

    test("GIVEN the README's app as the app's bin/ file WHEN `npx cdk synth` runs it through cdk.json THEN it synthesizes offline", () => {
      // tsc above type-checked the file; ts-node only transpiles here.
      const printed = run(
        'npx',
        ['--no-install', 'cdk', 'synth', '--quiet', '--no-notices', '--no-version-reporting'],
        app,
        240_000,
        { CDK_DISABLE_VERSION_CHECK: 'true', TS_NODE_TRANSPILE_ONLY: 'true' },
      );
      expect(printed).not.toMatch(/error/i);
      expect(readdirSync(join(app, 'cdk.out')).filter((f) => f.endsWith('.template.json'))).toEqual([
        'LlmStack.template.json',
      ]);
    });

    describe('when the documented commands run from the app', () => {
      let before: Record<string, string>;
      beforeAll(() => {
        before = sourceTree(app);
      });

      test("GIVEN the docs THEN the README's package commands are among the commands run here", () => {
        const readme = userBlocks
          .filter((b) => b.file === 'README.md')
          .map((b) => b.text)
          .join('\n');
        expect(readme).toContain(`npx -p ${ROUTER_PACKAGE} prefix-router simulate`);
        expect(readme).toContain(`npx -p ${ROUTER_PACKAGE} prefix-router plan`);
        expect(userBlocks.length).toBeGreaterThanOrEqual(6);
      });

      test.each(userBlocks.map((b): [string, ShellBlock] => [`${b.file}:${b.line}`, b]))(
        'GIVEN the block at %s THEN it runs from the installed package to exit code 0',
        async (_where, block) => {
          const environment = { cli: join(app, 'node_modules', '.bin', 'prefix-router'), realNpx: true };
          const probe = prepareBlock(block, () => 0, environment);
          const span = /ports (\d+)–(\d+)/.exec(probe.applied.join('\n'));
          const base = span ? await freeRange(Number(span[2]) - Number(span[1]) + 1) : 0;
          const { script, applied } = prepareBlock(block, () => base, environment);
          const { code, output } = await runBlockScript(script, app, 300_000);
          if (code !== 0)
            throw new Error(
              `${block.file}:${block.line} exited ${code} in ${app}\napplied: ${applied.join('; ')}\n--- output (last 4000 chars) ---\n${output.slice(-4000)}`,
            );
          expect(code).toBe(0);
        },
      );

      test("GIVEN the commands ran THEN the app's bin/ and lib/ are as they were, and reports went to ./prefix-router-reports/", () => {
        expect(sourceTree(app)).toEqual(before);
        expect(existsSync(join(app, 'reports'))).toBe(false);
        expect(existsSync(join(app, 'prefix-router-reports'))).toBe(true);
      });
    });
  });
});
