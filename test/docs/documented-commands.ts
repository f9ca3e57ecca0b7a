/**
 * Every shell command a user can copy from README.md and docs/*.md, made runnable in a test with small bounds.
 * The commands are taken from the markdown (fenced blocks marked sh, bash or shell) and changed only
 * mechanically, by the rules below; each rule is listed in `applied` so a test failure shows what ran.
 *
 * Bounds (so every block finishes in seconds):
 *   - a workload's `duration=N` and `--duration N` become at most BOUND_SECONDS (model seconds; `npm run demo`
 *     and `prefix-router demo` get `--duration 10 --time-scale 20`, its minimum), `--warmup N` at most WARMUP_SECONDS;
 *   - a `trace:` workload without `count=` gets `count=TRACE_COUNT`;
 *   - engine-model-speed.js gets `--seconds 60`; a `bench` without `--duration` gets `--duration BOUND_SECONDS`;
 *   - a `plan` without `--jobs` gets `--jobs 1` (its simulations in one thread; see `prepareBlock`).
 * Environment:
 *   - every port of the block (800x, 8080…) is mapped to a free loopback port, keeping their differences (so
 *     `--port 8001 --instances 4` still covers the mapped 8002–8004); other hosts (`gpu1:8000`,
 *     `https://llm.internal.example`) become loopback emulators;
 *   - backends a block routes to or benchmarks but does not start are started as emulators (p5 profile, the
 *     block's model name and time scale) before it runs;
 *   - server commands (`emulate`, `serve`) run in the background; after each, the block waits until its ports
 *     accept connections; when the block ends, its background processes are stopped;
 *   - `prefix-router`, `npx prefix-router` and `npx -p cdk-prefix-aware-llm-router prefix-router` run
 *     dist/bin/prefix-router.js (or, for the installed-package test, `Environment.cli`); `npm ci`, `npm test`, `npm install` and
 *     `npm run build` are what the test run itself did (CI runs them), so they are no-ops here; `npm run S`
 *     runs package.json's script S without its leading `npm run build &&`;
 *   - a block that only starts servers runs together with the next block of the same file (router.md starts a
 *     router in one block and calls it in the next), as a reader would;
 *   - a few blocks are not run here, each listed in NOT_RUN_HERE with its reason (Docker, GPUs, AWS, or run by
 *     another test);
 *   - blocks run in a scratch directory holding links to dist/, router/, node_modules/, package.json and
 *     tsconfig.json and a copy of docs/ (commands that rewrite docs rewrite the copy), so reports land there.
 */
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fleetFlag } from '../../router/src/cli/flag-values';
import { builtinProfile } from '../../router/src/emulator/engine-profile';

export const BOUND_SECONDS = 6;
export const WARMUP_SECONDS = 1;
export const TRACE_COUNT = 100;

/** A block not run here, and why. */
export interface NotRunHere {
  readonly file: string;
  readonly contains: string;
  readonly reason: string;
  /** The block that runs every command of this one word for word (the test checks it), when that is the reason. */
  readonly sameCommandsAs?: { readonly file: string; readonly contains: string };
}

/**
 * Blocks not run here, each for a stated reason. Every entry must match exactly one block (the test checks), so a
 * new documented command cannot slip out of the test by accident.
 */
export const NOT_RUN_HERE: readonly NotRunHere[] = [
  {
    file: 'docs/container.md',
    contains: 'docker build -f router/Dockerfile',
    reason:
      'needs Docker and an AWS login; the Dockerfile and its build script are checked in test/router/container/dockerfile.test.ts and by npm run check:image-contexts',
  },
  {
    file: 'docs/container.md',
    contains: 'docker compose -f examples/docker-compose.yml',
    reason: 'needs Docker; the compose file is checked in test/examples/docker-compose.test.ts',
  },
  {
    file: 'docs/container.md',
    contains: 'node dist/bin/prefix-router.js container',
    reason: 'run as written (ports freed) by test/router/container/container-docs-command.test.ts',
  },
  { file: 'docs/container.md', contains: 'docker run --gpus all', reason: 'needs Docker and GPUs' },
  {
    file: 'README.md',
    contains: 'npm install cdk-prefix-aware-llm\nnpx cdk synth',
    reason:
      "what test/installed/installed-app.test.ts does in a fresh cdk init app: installs the packed tarball, makes the snippet below the app's bin/ file and runs npx cdk synth",
  },
  {
    file: 'docs/validate.md',
    contains: 'npx cdk deploy PrefixAwareLlmMinimal',
    reason: 'deploys to an AWS account; the stacks are synthesized in test/examples/examples.test.ts',
  },
  {
    file: 'docs/validate.md',
    contains: 'bench --sagemaker-endpoint my-llm --region',
    reason:
      'needs a deployed endpoint; run against the local router by test/router/aws/validate-doc.test.ts (and rehearsed in validate.md, run here)',
  },
  {
    file: 'docs/validate.md',
    contains: 'bench --sagemaker-endpoint my-llm --api openai',
    reason:
      'needs a deployed endpoint and a bearer token; run against the local router by test/router/aws/validate-doc.test.ts',
  },
  {
    file: 'docs/validate.md',
    contains: 'prefix-router ab --endpoint-name my-llm',
    reason:
      'changes a deployed endpoint; run against the stateful SageMaker control-plane fake by test/router/aws/validate-doc.test.ts',
  },
  {
    file: 'docs/reliability.md',
    contains: 'npm run test:chaos                                   # every scenario at full size',
    reason:
      "every chaos scenario at full size takes about 15 minutes; each scenario runs at a small size in test/router/chaos/, and .ci/run runs this block's second line (the 60-second soak) after npm test",
  },
  {
    file: 'docs/validate.md',
    contains: 'aws sagemaker update-endpoint',
    reason:
      'the AWS CLI against a deployed endpoint (finishing a restore by hand); each line runs, placeholders filled in, against the SageMaker control-plane fake left as a killed run leaves it, in test/router/aws/validate-doc.test.ts',
  },
  {
    file: 'docs/validate.md',
    contains: 'aws sagemaker create-endpoint-config --cli-input-json',
    reason:
      'the AWS CLI against a Failed endpoint (recreate the configuration and the endpoint); each line runs against the SageMaker control-plane fake in test/router/aws/validate-doc.test.ts',
  },
  {
    file: 'docs/validate.md',
    contains: 'prefix-router ab --shadow --endpoint-name my-llm',
    reason:
      'creates shadow endpoints in an AWS account; run against the stateful SageMaker control-plane fake (an endpoint hosting a base component and the adapter it names) by test/router/aws/validate-doc.test.ts',
  },
  {
    file: 'docs/validate.md',
    contains: 'npx cdk deploy PrefixAwareLlmRoutingAbVariants\nprefix-router ab',
    reason:
      'deploys to an AWS account; ab --variants runs against the SageMaker control-plane fake in test/router/aws/validate-doc.test.ts',
  },
  {
    file: 'docs/own-traffic.md',
    contains: 's3://my-capture-bucket/datacapture/',
    reason:
      "reads an S3 bucket and a model's tokenizer.json; the S3 path runs through the real client against aws-sdk-client-mock in test/router/trace-import/s3-source.test.ts and --tokenizer on a generated tokenizer.json in bodies-and-privacy.test.ts",
  },
  {
    file: 'docs/plan.md',
    contains: 'prefix-router plan --workload trace:mooncake-synthetic',
    reason:
      "its two plan commands are step 4 of the README's newcomer block, run there word for word (each plan is about 15 s of CPU)",
    sameCommandsAs: { file: 'README.md', contains: 'prefix-router plan --workload trace:mooncake-synthetic' },
  },
  {
    file: 'docs/own-traffic.md',
    contains: "prefix-router bench --sagemaker-endpoint my-llm --region us-east-1 --workload 'trace:my-traffic.jsonl'",
    reason:
      'needs a deployed endpoint; the same bench with the imported trace runs against the local router in the rehearsal block before it, and ab as in docs/validate.md (test/router/aws/validate-doc.test.ts)',
  },
];

export function notRunReason(block: ShellBlock): string | undefined {
  return NOT_RUN_HERE.find((e) => e.file === block.file && block.text.includes(e.contains))?.reason;
}

export interface ShellBlock {
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly text: string;
}

/** Fenced blocks of a markdown text whose info string is one of `languages`, with the line of their opening fence. */
export function fencedBlocks(markdown: string, file: string, languages: readonly string[]): ShellBlock[] {
  const blocks: ShellBlock[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    if (end < 0) break;
    if (languages.includes(open[1])) blocks.push({ file, line: i + 1, text: lines.slice(i + 1, end).join('\n') });
    i = end;
  }
  return blocks;
}

/** Fenced sh/bash/shell blocks of a markdown text. */
export function shellBlocks(markdown: string, file: string): ShellBlock[] {
  return fencedBlocks(markdown, file, ['sh', 'bash', 'shell']);
}

/** README.md and every docs/*.md, in that order. */
export function documentedBlocks(root: string): ShellBlock[] {
  const files = [
    'README.md',
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .sort()
      .map((f) => `docs/${f}`),
  ];
  return files.flatMap((f) => shellBlocks(readFileSync(join(root, f), 'utf8'), f));
}

const SERVER = /(?:prefix-router(?:\.js)?|\$PR|\$\{PR\})\s+(emulate|serve)\b/;

/** The router package's name: `npx -p ROUTER_PACKAGE prefix-router …` runs its CLI whether or not it is installed. */
export const ROUTER_PACKAGE = 'cdk-prefix-aware-llm-router';

/** How a prepared block reaches the CLI. */
export interface Environment {
  /** Shell words that run prefix-router (default: the repository's build, `node dist/bin/prefix-router.js`). */
  readonly cli: string;
  /** Whether `npx -p ROUTER_PACKAGE prefix-router` runs the real npx (offline, so only an installed package serves). */
  readonly realNpx: boolean;
}

const REPOSITORY_BUILD: Environment = { cli: 'node dist/bin/prefix-router.js', realNpx: false };

/** Commands of a script with continuation lines joined (for analysis; the script itself runs as written). */
function logicalLines(text: string): string[] {
  return text.replace(/\\\n\s*/g, ' ').split('\n');
}

/** The commands of a script: continuation lines joined, comments and blank lines dropped, spaces collapsed. */
export function commandsOf(text: string): string[] {
  return logicalLines(text)
    .map((l) =>
      l
        .replace(/(^|\s)#.*$/, '$1')
        .replace(/\s+/g, ' ')
        .trim(),
    )
    .filter((l) => l !== '');
}

/** True when every command of the block starts a server (and nothing else runs). */
export function onlyStartsServers(block: ShellBlock): boolean {
  const commands = commandsOf(block.text).filter((l) => !/^npm (ci|run build)\b/.test(l));
  const startsServer =
    /^(?:node dist\/bin\/prefix-router\.js|npx (?:-p \S+ )?prefix-router|prefix-router|\$PR|\$\{PR\})\s+(?:emulate|serve)\b/;
  return commands.length > 0 && commands.every((c) => startsServer.test(c));
}

/** Joins blocks that only start servers with the block after them (same file). */
export function runnableBlocks(blocks: readonly ShellBlock[]): ShellBlock[] {
  const out: ShellBlock[] = [];
  for (let i = 0; i < blocks.length; i++) {
    const b = blocks[i];
    const next = blocks[i + 1];
    if (onlyStartsServers(b) && next !== undefined && next.file === b.file) {
      out.push({ file: b.file, line: b.line, text: `${b.text}\n${next.text}` });
      i++;
    } else {
      out.push(b);
    }
  }
  return out;
}

/**
 * Instances an `--instances` value starts: `N`, or a mixed fleet `COUNT:PROFILE,…` on consecutive ports (read by the
 * CLI's own parser, so `2:p5-llama-3.1-70b,1:p4d-llama-3.1-70b` is 3 ports, not 2); 1 without the flag.
 */
function instanceCount(raw: string | undefined): number {
  if (raw === undefined) return 1;
  return fleetFlag('instances', raw, { min: 1, max: 1024 }, () => builtinProfile('tiny')).length;
}

export interface Prepared {
  /** The bash script to run. */
  readonly script: string;
  /** Every rule applied, in words. */
  readonly applied: readonly string[];
}

/**
 * The block as a bounded, self-contained bash script. `freePortBase(span)` returns a base port with `span`
 * consecutive free loopback ports.
 */
export function prepareBlock(
  block: ShellBlock,
  freePortBase: (span: number) => number,
  environment: Environment = REPOSITORY_BUILD,
): Prepared {
  const cli = environment.cli;
  const applied: string[] = [];
  let text = block.text;

  // Bounds.
  text = text.replace(/([?&])duration=(\d+)/g, (m, sep: string, n: string) => {
    if (Number(n) <= BOUND_SECONDS) return m;
    applied.push(`duration=${n} → duration=${BOUND_SECONDS}`);
    return `${sep}duration=${BOUND_SECONDS}`;
  });
  text = text.replace(/--duration (\d+)/g, (m, n: string) => {
    if (Number(n) <= BOUND_SECONDS) return m;
    applied.push(`--duration ${n} → --duration ${BOUND_SECONDS}`);
    return `--duration ${BOUND_SECONDS}`;
  });
  text = text.replace(/--warmup (\d+)/g, (m, n: string) => {
    if (Number(n) <= WARMUP_SECONDS) return m;
    applied.push(`--warmup ${n} → --warmup ${WARMUP_SECONDS}`);
    return `--warmup ${WARMUP_SECONDS}`;
  });
  text = text.replace(/trace:([^\s'"?]+)(\?[^\s'"]*)?/g, (m, path: string, query: string | undefined) => {
    if (query?.includes('count=')) return m;
    applied.push(`trace:${path} → count=${TRACE_COUNT}`);
    return `trace:${path}${query ? `${query}&` : '?'}count=${TRACE_COUNT}`;
  });
  text = text.replace(/engine-model-speed\.js(?![^\n]*--seconds)/g, () => {
    applied.push('engine-model-speed.js → --seconds 60');
    return 'engine-model-speed.js --seconds 60';
  });
  // A bench whose workload keeps sending (multi-turn think times) is bounded by --duration too.
  text = withFlag(text, 'bench', '--duration', String(BOUND_SECONDS), applied);
  // A plan of a bounded workload runs its few dozen short simulations in this process: its default, a worker thread
  // per core for each round of the search, loads the CLI's modules again in every worker (about 3.5 s of CPU a plan).
  // plan's worker threads are checked against one thread in test/router/plan/planner.test.ts, and the README's
  // multi-policy simulate still runs on worker threads here.
  text = withFlag(text, 'plan', '--jobs', '1', applied);
  text = text.replace(/npm run demo\b/g, () => {
    applied.push('npm run demo → --duration 10 --time-scale 20 (its minimum duration)');
    return 'npm run demo -- --duration 10 --time-scale 20';
  });
  text = text.replace(/(prefix-router demo\b)(?![^\n]*--duration)/g, (m: string) => {
    applied.push('prefix-router demo → --duration 10 --time-scale 20 (its minimum duration)');
    return `${m} --duration 10 --time-scale 20`;
  });

  // Hosts other than loopback become loopback ports above the block's own (mapped below like the others).
  const localPorts = [...text.matchAll(/(?:(?:127\.0\.0\.1|localhost):|--port )(\d{4,5})\b/g)].map((m) => Number(m[1]));
  const instanceSpans = [
    ...text.matchAll(/--instances (\S+) --port (\d{4,5})|--port (\d{4,5})[^\n&]*--instances (\S+)/g),
  ].map((m) => (m[1] ? Number(m[2]) + instanceCount(m[1]) - 1 : Number(m[3]) + instanceCount(m[4]) - 1));
  let top = Math.max(8000, ...localPorts, ...instanceSpans);
  const external = new Map<string, number>();
  text = text.replace(
    /(https?):\/\/(?!127\.0\.0\.1|localhost)([a-z][\w.-]*)(?::(\d+))?/g,
    (_m, _scheme: string, host: string, port: string | undefined) => {
      const key = `${host}:${port ?? ''}`;
      if (!external.has(key)) {
        external.set(key, ++top);
        applied.push(`${host}${port ? `:${port}` : ''} → a loopback emulator`);
      }
      return `http://127.0.0.1:${external.get(key)}`;
    },
  );

  // Ports → free loopback ports, differences kept.
  const ports = [
    ...new Set([...text.matchAll(/(?:(?:127\.0\.0\.1|localhost):|--port )(\d{4,5})\b/g)].map((m) => Number(m[1]))),
  ];
  if (ports.length > 0) {
    const low = Math.min(...ports);
    const base = freePortBase(top - low + 1);
    const map = (p: number) => base + (p - low);
    text = text.replace(
      /((?:127\.0\.0\.1|localhost):|--port )(\d{4,5})\b/g,
      (_m, prefix: string, p: string) => `${prefix}${map(Number(p))}`,
    );
    applied.push(`ports ${low}–${top} → ${base}–${map(top)}`);
  }

  // Servers: background, then wait for their ports.
  const lines = text.split('\n');
  const out: string[] = [];
  let command = '';
  for (const line of lines) {
    command += (command ? '\n' : '') + line;
    if (line.endsWith('\\')) continue;
    const flat = command.replace(/\\\n\s*/g, ' ');
    const code = flat.replace(/(^|\s)#.*$/, '$1'); // a comment starts a word; `${X/#/y}` is not one
    const server = SERVER.exec(code);
    if (server && !/^\s*#/.test(flat)) {
      const port = /--port (\d+)/.exec(flat)?.[1] ?? '8000';
      const instances = server[1] === 'emulate' ? instanceCount(/--instances (\S+)/.exec(flat)?.[1]) : 1;
      let started = command;
      if (!/&\s*(\S+=\$!)?\s*$/.test(code.trim())) {
        started = `${command.replace(/(^|\s)#[^'"\n]*$/, '$1').trimEnd()} &`;
        applied.push(`${server[1]} runs in the background`);
      }
      out.push(started);
      // Inside a loop the port is a variable-free literal here too; wait for every port the command opens.
      for (let i = 0; i < instances; i++) out.push(`__wait_port $(( ${port} + ${i} ))`);
    } else {
      out.push(command);
    }
    command = '';
  }
  if (command) out.push(command);
  const body = out.join('\n');

  // Backends routed to or benchmarked but not started by the block: emulators.
  const flatBody = body.replace(/\\\n\s*/g, ' ');
  const started = new Set<number>();
  for (const m of flatBody.matchAll(/emulate[^\n&]*/g)) {
    const port = Number(/--port (\d+)/.exec(m[0])?.[1] ?? '8000');
    const n = instanceCount(/--instances (\S+)/.exec(m[0])?.[1]);
    for (let i = 0; i < n; i++) started.add(port + i);
  }
  const serving = new Set<number>();
  for (const m of flatBody.matchAll(/serve[^\n&]*--port (\d+)/g)) serving.add(Number(m[1]));
  for (const m of body.matchAll(/--port=(\d+)/g)) serving.add(Number(m[1]));
  const wanted = new Set<number>();
  for (const m of body.matchAll(/http:\/\/127\.0\.0\.1:(\d+)/g)) wanted.add(Number(m[1]));
  const missing = [...wanted].filter((p) => !started.has(p) && !serving.has(p)).sort((a, b) => a - b);
  const model = /--model (\S+)/.exec(body)?.[1] ?? /"model":\s*"([^"]+)"/.exec(body)?.[1];
  const timeScale = /--time-scale (\S+)/.exec(body)?.[1] ?? '10';
  const prelude = missing.map(
    (p) =>
      `${cli} emulate --port ${p} --time-scale ${timeScale}${model ? ` --model ${model}` : ''} --log-level warn &\n__wait_port ${p}`,
  );
  if (missing.length > 0)
    applied.push(`emulators started for ${missing.join(', ')}${model ? ` serving ${model}` : ''}`);

  // Variables the block reads but does not set (a token, say): a placeholder value, so `set -u` holds.
  const assigned = new Set([...body.matchAll(/\b([A-Z_][A-Z0-9_]*)=/g)].map((m) => m[1]));
  const read = new Set([...body.matchAll(/\$\{?([A-Z_][A-Z0-9_]*)\}?(?![:\w-])/g)].map((m) => m[1]));
  const placeholders = [...read].filter((v) => !assigned.has(v) && !new RegExp(`\\$\\{${v}:-`).test(body)).sort();
  if (placeholders.length > 0) applied.push(`placeholder values for ${placeholders.join(', ')}`);

  const script = [
    'set -euo pipefail',
    ...placeholders.map((v) => `export ${v}=placeholder-${v.toLowerCase()}`),
    // Stop every process the block started, whatever happens.
    // The script leads its own process group (spawned detached): on exit, ignore TERM here and send it to the
    // whole group, so servers started through shell functions or subshells stop too; keep the exit status.
    'trap \'__status=$?; trap "" TERM; kill -TERM -- -$$ 2>/dev/null; wait 2>/dev/null; exit $__status\' EXIT',
    `prefix-router() { ${cli} "$@"; }`,
    environment.realNpx
      ? `npx() { if [ "$1" = prefix-router ]; then shift; ${cli} "$@"; else npm_config_offline=true command npx "$@"; fi; }`
      : `npx() { if [ "$1" = prefix-router ]; then shift; ${cli} "$@"; elif [ "$1" = -p ] && [ "$2" = ${ROUTER_PACKAGE} ] && [ "$3" = prefix-router ]; then shift 3; ${cli} "$@"; else command npx "$@"; fi; }`,
    'npm() {',
    '  case "$1" in',
    '    ci|test|install) return 0 ;;',
    '    run) shift; local name="$1"; shift; [ "${1:-}" = -- ] && shift',
    '      [ "$name" = build ] && return 0',
    '      local cmd; cmd=$(node -p "require(\'./package.json\').scripts[process.argv[1]].replace(/^npm run build && /, \'\')" "$name")',
    '      eval "$cmd" \'"$@"\' ;;',
    '    *) command npm "$@" ;;',
    '  esac',
    '}',
    '__wait_port() { for _ in $(seq 1 600); do curl -s -o /dev/null "http://127.0.0.1:$1/" && return 0; sleep 0.1; done; echo "port $1 never opened" >&2; return 1; }',
    ...prelude,
    body,
  ].join('\n');
  return { script, applied };
}

/**
 * Every `prefix-router SUBCOMMAND` command of `text` (continuation lines included) without `flag` gets `flag value`
 * at its end, before a trailing comment; each change is listed in `applied`.
 */
function withFlag(text: string, subcommand: string, flag: string, value: string, applied: string[]): string {
  const command = new RegExp(
    `((?:prefix-router(?:\\.js)?|\\$PR|\\$\\{PR\\}) ${subcommand}\\b(?:[^\\n]*\\\\\\n)*[^\\n]*)`,
    'g',
  );
  return text.replace(command, (m: string) => {
    if (m.includes(flag)) return m;
    applied.push(`${subcommand} → ${flag} ${value}`);
    return m.replace(/\s*((?:\s#[^\n]*)?)$/, ` ${flag} ${value}$1`);
  });
}

/** A base port with `span` consecutive free loopback ports (checked by binding each). */
export async function freeRange(span: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 30_000);
    const servers = [];
    let ok = true;
    for (let p = base; p < base + span && ok; p++) {
      const server = createServer();
      ok = await new Promise<boolean>((resolve) => {
        server.once('error', () => resolve(false));
        server.listen(p, '127.0.0.1', () => resolve(true));
      });
      servers.push(server);
    }
    await Promise.all(
      servers.map((s) => new Promise<void>((resolve) => (s.listening ? s.close(() => resolve()) : resolve()))),
    );
    if (ok) return base;
  }
  throw new Error(`no ${span} consecutive free ports`);
}

/** Runs a prepared block as its own process group (so its servers can be stopped with it), output collected. */
export function runBlockScript(
  script: string,
  cwd: string,
  timeoutMs: number,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd, env: { ...process.env, NO_COLOR: '1' }, detached: true });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => {
      output += `\n[timed out after ${timeoutMs} ms]`;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}
