import { Command, type Option } from 'commander';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineBenchOptions, parseBenchFlags } from '../../../router/src/cli/bench-flags';
import { COMMANDS } from '../../../router/src/cli/commands';
import { runAbCommand } from '../../../router/src/cli/ab-command';
import { parseDemoFlags } from '../../../router/src/cli/demo-command';
import { parseEmulateFlags } from '../../../router/src/cli/emulate-command';
import { parsePlanFlags } from '../../../router/src/cli/plan-command';
import { parseSimulateFlags } from '../../../router/src/cli/simulate-command';
import { runTraceImport, runWriteCapture } from '../../../router/src/cli/trace-command';
import { ConfigError } from '../../../router/src/common/config-error';
import { CLI_OPTIONS, loadRouterConfig, policyOptionSpecs } from '../../../router/src/config';

/**
 * The one number rule (router/src/common/decimal-text.ts), checked on every numeric flag of every sub-command
 * as commander declares them: `0x10` (which Number() reads as 16) is refused with a message naming the flag.
 * The list of flags is not written here: it is read from the registered commands, and a value name this test
 * has not classified fails it, so a new flag cannot escape the check.
 */
const NUMERIC_VALUE_NAMES = new Set([
  'n',
  'fleet',
  'ms',
  's',
  'seconds',
  'min',
  'port',
  'base',
  'chars',
  'cv',
  'percent',
  'r',
  'tokens',
  'usd',
  'x',
  'range',
]);
const TEXT_VALUE_NAMES = new Set([
  'api',
  'backend=endpoint',
  'dir',
  'encoding',
  'json',
  'file',
  'format',
  'header',
  'hf-id',
  'host',
  'hosts',
  'id',
  'label',
  'level',
  'least-loaded|rendezvous',
  'list',
  'mode',
  'name',
  'name|file',
  'name: value',
  'name=path...',
  'NAME=VALUE',
  'on|off',
  'ns',
  'path',
  'region',
  'report.json',
  'slo',
  'spec',
  'topic',
  'type',
  'url',
  'url...',
]);
const HEX = '0x10';

interface FlagCase {
  readonly command: string;
  readonly option: Option;
  readonly valueName: string;
}

function program(): Command {
  const root = new Command().exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  for (const register of COMMANDS) register(root);
  return root;
}

function commandsOf(root: Command, path: string[] = []): Array<{ path: string[]; command: Command }> {
  return root.commands.flatMap((c) => [
    { path: [...path, c.name()], command: c },
    ...commandsOf(c, [...path, c.name()]),
  ]);
}

function flagCases(): FlagCase[] {
  return commandsOf(program()).flatMap(({ path, command }) =>
    command.options
      .filter((o) => o.required || o.optional)
      .map((option) => ({ command: path.join(' '), option, valueName: /<([^>]+)>/.exec(option.flags)![1] })),
  );
}

const scratch = mkdtempSync(join(tmpdir(), 'numeric-flags-'));
const silentIo = () => {
  const err: string[] = [];
  return {
    err,
    io: { stdout: { write: () => true }, stderr: { write: (t: string) => err.push(t) > 0, isTTY: false } },
  };
};

/** How each sub-command validates its flags without starting anything: required arguments and the validator. */
const VALIDATION: Record<
  string,
  { readonly required: readonly string[]; validate(opts: Record<string, unknown>, args: readonly string[]): unknown }
> = {
  serve: {
    required: ['--backend', 'http://127.0.0.1:9'],
    validate: (opts) => loadRouterConfig({ flags: opts, env: {} }),
  },
  emulate: { required: [], validate: (opts) => parseEmulateFlags(opts as Record<string, string>) },
  simulate: { required: [], validate: (opts) => parseSimulateFlags(opts) },
  bench: {
    required: ['--url', 'http://127.0.0.1:9', '--workload', 'short-chat'],
    validate: (opts) => parseBenchFlags(opts),
  },
  demo: { required: [], validate: (opts) => parseDemoFlags(opts) },
  plan: { required: ['--slo', 'p90-ttft<=1s'], validate: (opts) => parsePlanFlags(opts) },
  'trace import': {
    required: ['--out', join(scratch, 'trace.jsonl'), join(scratch, 'no-such-input')],
    validate: (opts, args) => runTraceImport(args, opts, () => undefined),
  },
  'trace write-capture': {
    required: ['--workload', 'short-chat?count=1', '--request-log', join(scratch, 'requests.jsonl')],
    validate: (opts) => runWriteCapture(opts, () => undefined),
  },
  // ab checks its own flags before any AWS call and answers exit code 1 with the problems on stderr.
  ab: {
    required: ['--strategies', 'RANDOM', '--workload', 'short-chat'],
    validate: async (opts) => {
      const { err, io } = silentIo();
      const code = await runAbCommand(opts, { io });
      if (code === 1)
        throw new ConfigError(
          err
            .join('')
            .replace(/^prefix-router ab: /, '')
            .trim()
            .split(/\n\s*/),
        );
      return code;
    },
  },
};

/** ab's load flags are bench's: ab hands them to parseBenchFlags once the endpoint is known (needs AWS). */
const AB_FLAGS_VALIDATED_BY_BENCH = [
  '--concurrency',
  '--rate',
  '--duration',
  '--max-requests',
  '--warmup',
  '--timeout',
  '--time-scale',
];

async function problemsOf(command: string, argv: readonly string[]): Promise<readonly string[]> {
  const root = program();
  const target = commandsOf(root).find((c) => c.path.join(' ') === command)!.command;
  target.action(() => undefined).exitOverride();
  await root.parseAsync([...command.split(' '), ...VALIDATION[command].required, ...argv], { from: 'user' });
  try {
    await VALIDATION[command].validate(
      target.opts(),
      target.args.filter((a) => !a.startsWith('-')),
    );
    return [];
  } catch (err) {
    // Any other error comes from the work that starts once the flags are accepted (e.g. reading a missing input).
    return err instanceof ConfigError ? err.problems : [];
  }
}

const cases = flagCases();
const numeric = cases.filter((c) => NUMERIC_VALUE_NAMES.has(c.valueName));

describe('when any sub-command is given a numeric flag', () => {
  test('GIVEN the registered commands THEN every value name is classified as numeric or text', () => {
    expect(
      cases.map((c) => c.valueName).filter((n) => !NUMERIC_VALUE_NAMES.has(n) && !TEXT_VALUE_NAMES.has(n)),
    ).toEqual([]);
    // The check covers every command that has a numeric flag.
    expect([...new Set(numeric.map((c) => c.command))].sort()).toEqual(Object.keys(VALIDATION).sort());
  });

  const direct = numeric.filter((c) => !(c.command === 'ab' && AB_FLAGS_VALIDATED_BY_BENCH.includes(c.option.long!)));
  test.each(direct.map((c) => [c.command, c.option.long!] as const))(
    'GIVEN %s %s 0x10 THEN it is refused naming the flag',
    async (command, flag) => {
      const problems = await problemsOf(command, [flag, HEX]);
      expect(problems.filter((p) => p.includes(flag) && p.includes(JSON.stringify(HEX)))).toHaveLength(1);
    },
  );

  const withNumericDefault = direct.filter(
    (c) => typeof c.option.defaultValue === 'string' && /^\d+(\.\d+)?$/.test(c.option.defaultValue),
  );
  test.each(withNumericDefault.map((c) => [c.command, c.option.long!, c.option.defaultValue as string] as const))(
    'GIVEN %s %s with its default %s written out THEN that flag has no problem',
    async (command, flag, value) => {
      const problems = await problemsOf(command, [flag, value]);
      expect(problems.filter((p) => p.includes(flag))).toEqual([]);
    },
  );

  test.each(AB_FLAGS_VALIDATED_BY_BENCH)(
    'GIVEN ab %s THEN bench declares the same flag with the same value, and bench refuses 0x10',
    async (flag) => {
      const ab = numeric.find((c) => c.command === 'ab' && c.option.long === flag)!;
      const bench = defineBenchOptions(new Command('bench')).options.find((o) => o.long === flag)!;
      expect(/<([^>]+)>/.exec(bench.flags)![1]).toBe(ab.valueName);
      const problems = await problemsOf('bench', [flag, HEX]);
      expect(problems.filter((p) => p.includes(flag) && p.includes(JSON.stringify(HEX)))).toHaveLength(1);
    },
  );
});

describe('when a numeric PREFIX_ROUTER_* variable is not decimal', () => {
  const specs = [...CLI_OPTIONS, ...policyOptionSpecs()].filter((s) => s.kind === 'integer' || s.kind === 'number');
  test.each(specs.map((s) => s.env))('GIVEN %s=0x10 THEN serve refuses it naming the variable', (env) => {
    expect(() => loadRouterConfig({ flags: { backend: ['http://127.0.0.1:9'] }, env: { [env]: HEX } })).toThrow(
      expect.objectContaining({
        problems: expect.arrayContaining([expect.stringMatching(new RegExp(`^${env}\\b.*0x10`))]),
      }),
    );
  });
});
