import type { Command } from 'commander';
import { BUILTIN_PROFILE_NAMES } from '../emulator/engine-profile';
import type { PolicyConfig } from '../policy';
import { formatPolicySpec, parsePolicySpec } from '../policy/policy-spec';
import { reportHeadline } from '../report/report-verdict';
import { TERMINAL_COLUMNS, wrap } from '../report/terminal-summary';
import {
  DEMO_DEFAULTS,
  DEMO_WORKLOAD,
  demoSummary,
  parseDemoWorkload,
  runDemo,
  type DemoOptions,
  type DemoResult,
} from '../demo/run-demo';
import {
  collect,
  defaultReportDir,
  fleetFlag,
  integerFlag,
  numberFlag,
  policyFlagSpecs,
  textFlag,
} from './flag-values';
import { engineArgOption, engineArgsFlag } from './engine-arg-flag';
import { fleetWithEngineArgs } from '../emulator/engine-args';
import { ConfigError } from '../common/config-error';
import { recognizingCaptureFiles } from './workload-flag';
import { addModelProfileFlags, modelProfileFromFlags } from './model-profile-flags';

/** `prefix-router demo` (what `npm run demo` runs): live comparison of routing strategies on loopback. */
export function register(program: Command): void {
  const command = program
    .command('demo')
    .description(
      'start emulated p5 vLLM instances and the router on loopback, compare routing strategies live, write a report',
    )
    .option(
      '--instances <fleet>',
      'emulated instances, 2..16: N of --profile, or a mixed fleet as COUNT:PROFILE groups, e.g. 3:p5-llama-3.1-70b,1:p4d-llama-3.1-70b',
      String(DEMO_DEFAULTS.instances),
    )
    .option(
      '--duration <seconds>',
      'model-time seconds each strategy sends for, 10..3600',
      String(DEMO_DEFAULTS.durationSeconds),
    )
    .option(
      '--time-scale <x>',
      'emulators run this much faster than the hardware they model, 1..20',
      String(DEMO_DEFAULTS.timeScale),
    )
    .option(
      '--profile <name|file>',
      `engine calibration: ${BUILTIN_PROFILE_NAMES.join(', ')}, or a JSON file (default ${DEMO_DEFAULTS.profile})`,
    )
    .option('--workload <spec>', 'workload spec (docs/workloads.md)', DEMO_WORKLOAD)
    .option(
      '--policy <spec>',
      'a strategy to compare, repeatable (default: random, least-outstanding-requests, sagemaker-prefix-aware, cache-aware)',
      collect,
    )
    .option('--seed <n>', 'seed of the policies\u2019 random choices', String(DEMO_DEFAULTS.seed))
    .option('--out <dir>', 'report directory (default ./prefix-router-reports/demo-<time>)')
    .option('--no-progress', 'no progress bar')
    .addOption(engineArgOption())
    .action(async (flags: Record<string, unknown>) => {
      await runDemoCommand(flags);
    });
  addModelProfileFlags(command);
}

export function parseDemoFlags(flags: Record<string, unknown>): DemoOptions {
  const str = (k: string) => textFlag(flags, k);
  const policies: PolicyConfig[] = (policyFlagSpecs(flags.policy) ?? DEMO_DEFAULTS.policies.map(formatPolicySpec)).map(
    (s) => parsePolicySpec(s),
  );
  const specs = policies.map(formatPolicySpec);
  if (new Set(specs).size !== specs.length)
    throw new ConfigError([`--policy lists the same policy twice (${specs.join(', ')})`]);
  const choice = modelProfileFromFlags(flags, DEMO_DEFAULTS.profile, false, 'demo');
  const profile = choice.profile.name;
  const fleet = fleetFlag(
    'instances',
    str('instances') ?? String(DEMO_DEFAULTS.instances),
    { min: 2, max: 16 },
    () => choice.profile,
  );
  const engineArgs = engineArgsFlag(flags);
  fleetWithEngineArgs(fleet, engineArgs); // refuses what the engines would (relations to each profile) before any start
  return {
    instances: fleet.length,
    // A derived profile has no name resolveProfile knows: the fleet carries it.
    ...(new Set(fleet.map((p) => p.name)).size > 1 || choice.derived !== undefined ? { profiles: fleet } : {}),
    durationMs: numberFlag('duration', str('duration') ?? String(DEMO_DEFAULTS.durationSeconds), 10, 3600) * 1000,
    timeScale: numberFlag('time-scale', str('timeScale') ?? String(DEMO_DEFAULTS.timeScale), 1, 20),
    profile,
    workload: recognizingCaptureFiles(() => parseDemoWorkload(str('workload'))),
    policies,
    seed: integerFlag('seed', str('seed') ?? String(DEMO_DEFAULTS.seed), 0, 4294967295),
    outDir: str('out') ?? defaultReportDir('demo'),
    progress: flags.progress === false ? 'silent' : 'auto',
    ...(Object.keys(engineArgs).length > 0 ? { engineArgs } : {}),
  };
}

export async function runDemoCommand(
  flags: Record<string, unknown>,
  out: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
): Promise<DemoResult> {
  const options = parseDemoFlags(flags);
  const wallSeconds = (options.policies.length * options.durationMs) / options.timeScale / 1000;
  out(
    `prefix-router demo: ${options.policies.length} strategies × ${options.durationMs / 1000} s of model time on ${options.instances} emulated ${options.profile} instances ` +
      `(${options.timeScale}× real time, ≈${Math.ceil(wallSeconds / 60)} min)\nworkload: ${options.workload.description}; ${options.workload.spec}\n`,
  );
  const abort = new AbortController();
  const onSignal = () => {
    out('\nstopping: in-flight requests are cancelled, the report keeps what finished');
    abort.abort();
  };
  process.once('SIGINT', onSignal);
  try {
    const result = await runDemo(options, (l) => out(l), abort.signal);
    const headline = reportHeadline(result.report);
    const verdict =
      headline === null
        ? []
        : [
            ...wrap(headline.verdict, TERMINAL_COLUMNS),
            ...headline.warnings.flatMap((w) => wrap(`⚠ ${w}`, TERMINAL_COLUMNS, '  ')),
          ];
    out(`\n${[...verdict, ...(verdict.length > 0 ? [''] : []), demoSummary(result.report)].join('\n')}\n`);
    out(`report: ${result.files.html}\n        ${result.files.markdown}\n        ${result.files.json}`);
    return result;
  } finally {
    process.removeListener('SIGINT', onSignal);
  }
}
