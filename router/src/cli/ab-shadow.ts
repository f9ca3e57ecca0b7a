import type { SageMakerClient } from '@aws-sdk/client-sagemaker';
import { buildAbPlan, usd, type AbStrategy } from '../aws/ab-plan';
import {
  AwsSetupError,
  gpusPerInstance,
  servedModelFromEnvironment,
  servedModelName,
  type EndpointFacts,
} from '../aws/endpoint-facts';
import type { AbOutcome } from '../aws/routing-ab';
import {
  buildShadowPlan,
  readLiveComponents,
  renderShadowPlan,
  ShadowAb,
  shadowPrefix,
  type ShadowFleet,
  type ShadowOutcome,
  type ShadowPlan,
} from '../aws/shadow-ab';
import { classifyControlPlaneError, type Clock, type RetryPolicy } from '../aws/throttling-retry';
import type { RawBenchFlags } from './bench-flags';
import type { BenchIo } from './bench-run';
import { AbExitCode, endedAbStatus } from './ab-exit';
import { listenForAbSignals, type AbSignal, type AbSignalSources } from './ab-signals';
import { measureRun, writableReportDirectory, writeAndListReport } from './ab-steps';
import { sageMakerBenchPlan, type SageMakerTarget } from './sagemaker-bench';

/**
 * `prefix-router ab --shadow`: the command side of shadow-ab.ts. Prints the plan with its cost and the capacity it
 * needs, changes nothing without --yes, and with --yes also needs --max-shadow-cost-usd at or above the estimate
 * (so a second fleet of large instances is never a surprise). Exit codes as `ab`: 0 done (or plan only), 1 bad
 * flags or setup (nothing created), 2 a run or a shadow failed but everything created was deleted, 3 something
 * created is still there (the message lists it, the commands that delete it and what it still costs per hour),
 * 128 + the signal's number when a signal stopped the run and everything was deleted.
 */
export interface ShadowAbInput {
  readonly io: BenchIo;
  readonly clock: Clock;
  readonly target: SageMakerTarget;
  readonly facts: EndpointFacts;
  readonly strategies: readonly AbStrategy[];
  /** The bench flags of the run, as `ab` passes them to every run. */
  readonly benchFlags: RawBenchFlags;
  /** The live component the workload invokes (its copy on each shadow); default the only one. */
  readonly inferenceComponent: string | undefined;
  /** `--model`: the body's model name (default: the component's served model; an adapter's own name). */
  readonly model: string | undefined;
  readonly pricePerInstanceHour: number | undefined;
  readonly maxShadowCostUsd: number | undefined;
  readonly yes: boolean;
  readonly quiet: boolean;
  readonly runSeconds: number;
  readonly runId: string;
  readonly startedAt: Date;
  readonly directory: string;
  readonly pollIntervalMs: number;
  readonly createTimeoutMs: number | undefined;
  readonly cleanupTimeoutMs: number | undefined;
  readonly retry: RetryPolicy;
  readonly renewSageMaker?: () => SageMakerClient;
  readonly signals: AbSignalSources;
  /** When the resolved credentials expire (undefined: no expiry given). */
  readonly credentialsExpireAt?: Date;
  readonly acceptCredentialExpiry?: boolean;
  /** A local rehearsal's speed-up of waits (1 against AWS). */
  readonly timeScale?: number;
}

/** The body's model name on one shadow: an adapter is served under its component's (shadow) name, a base under its served model. */
async function modelOn(plan: ShadowPlan, fleet: ShadowFleet, input: ShadowAbInput): Promise<string> {
  if (input.model !== undefined) return input.model;
  const target = plan.target;
  if (target.base !== undefined) return fleet.components.find((c) => c.live === target.name)!.name;
  const fromEnv = servedModelFromEnvironment(target.specification.Container?.Environment ?? {});
  if (fromEnv !== undefined) return fromEnv;
  const fromModel =
    target.specification.ModelName === undefined
      ? undefined
      : await servedModelName(input.target.sagemaker!, target.specification.ModelName, input.clock);
  if (fromModel !== undefined) return fromModel;
  throw new AwsSetupError(
    'unsupported',
    `cannot tell which model component '${target.name}' serves (no SM_VLLM_MODEL / SM_VLLM_SERVED_MODEL_NAME / HF_MODEL_ID in its environment or its model's); pass --model`,
  );
}

export async function runShadowAb(input: ShadowAbInput): Promise<number> {
  const { io, facts } = input;
  const plan = buildShadowPlan({
    facts,
    components: await liveComponents(input),
    strategies: input.strategies,
    runId: input.runId,
    target: input.inferenceComponent,
    pricePerInstanceHour: input.pricePerInstanceHour,
    runSeconds: input.runSeconds,
  });
  const targets = await shadowTargets(plan, input);
  const { settings } = sageMakerBenchPlan(input.benchFlags, targets.get(plan.fleets[0].endpointName)!);
  io.stdout.write(`${renderShadowPlan(plan)}\n`);
  const refusal = shadowRefusal(plan, input);
  if (refusal !== undefined) return refusal;
  if (!(await writableReportDirectory(input.directory, io, 'nothing was created'))) return AbExitCode.Refused;
  const listener = listenForAbSignals(input.signals, io, {
    first: (name) =>
      `${name}: stopping the run and deleting every shadow resource it created (nothing else is sent; killing the process now leaves them billing: see docs/validate.md)`,
    again: (name) => `${name}: still deleting the shadow resources`,
  });
  let outcome: ShadowOutcome;
  try {
    outcome = await runShadows(input, plan, targets, listener.signal);
  } finally {
    listener.remove();
  }
  const abPlan = {
    ...buildAbPlan({
      facts,
      mode: 'shadow',
      strategies: input.strategies,
      pricePerInstanceHour: plan.pricePerInstanceHour,
      runSeconds: input.runSeconds,
    }),
    instances: plan.instances,
  };
  const { directory, runId, startedAt } = input;
  const report = { directory, plan: abPlan, outcome: reportOutcome(outcome, plan, runId), runId, startedAt };
  await writeAndListReport({ ...report, workload: settings.workload }, io);
  return shadowExitCode(outcome, input, listener.caught());
}

async function liveComponents(input: ShadowAbInput): Promise<Awaited<ReturnType<typeof readLiveComponents>>> {
  const { facts } = input;
  return readLiveComponents(input.target.sagemaker!, facts.endpointName, input.clock, input.retry).catch(
    (err: unknown) => {
      if (err instanceof AwsSetupError) throw err;
      const kind = classifyControlPlaneError(err);
      throw new AwsSetupError(
        kind === 'transient' || kind === 'throttling' ? 'network' : 'unsupported',
        `could not read the inference components of '${facts.endpointName}' (${(err as Error).name}: ${(err as Error).message}); nothing was created`,
        { cause: err },
      );
    },
  );
}

/** Every shadow's target: the same flags, its own endpoint, component and model name. Checked before the plan is shown. */
async function shadowTargets(plan: ShadowPlan, input: ShadowAbInput): Promise<Map<string, SageMakerTarget>> {
  const targets = new Map<string, SageMakerTarget>();
  for (const fleet of plan.fleets) {
    const component = fleet.components.find((c) => c.live === plan.target.name)!.name;
    const shadowTarget: SageMakerTarget = {
      ...input.target,
      endpointName: fleet.endpointName,
      inferenceComponent: component,
      model: await modelOn(plan, fleet, input),
    };
    sageMakerBenchPlan(input.benchFlags, shadowTarget);
    targets.set(fleet.endpointName, shadowTarget);
  }
  return targets;
}

/**
 * Why the plan does not run, after saying so (Done without --yes; Refused for credentials that expire too soon, an
 * unknown price, or a cost not acknowledged by --max-shadow-cost-usd); undefined when it runs.
 */
function shadowRefusal(plan: ShadowPlan, input: ShadowAbInput): AbExitCode | undefined {
  const { io } = input;
  // As the switch does: credentials that expire before the run ends would leave the cleanup failing.
  const needMs = (plan.shadowMinutes * 60_000) / (input.timeScale ?? 1);
  const expiry = input.credentialsExpireAt;
  const expiresTooSoon = expiry !== undefined && expiry.getTime() - input.clock.now() < needMs;
  if (expiresTooSoon) {
    io.stdout.write(
      `\nWARNING: the AWS credentials expire at ${expiry.toISOString()}, before the run's ≈ ${Math.round(needMs / 60_000)} min end. If they do not refresh themselves, the cleanup's calls fail from then on (it re-resolves the credential chain and retries until --restore-timeout); refresh them first, or pass --accept-credential-expiry when they refresh themselves.\n`,
    );
  }
  if (!input.yes) {
    io.stdout.write(
      '\nNothing was changed or created. Rerun with --yes and --max-shadow-cost-usd (at least the estimate above) to run this plan.\n',
    );
    return AbExitCode.Done;
  }
  const problem =
    expiresTooSoon && input.acceptCredentialExpiry !== true ? CREDENTIALS_EXPIRE : costProblem(plan, input);
  if (problem === undefined) return undefined;
  io.stderr.write(`prefix-router ab: ${problem}\n`);
  return AbExitCode.Refused;
}

const CREDENTIALS_EXPIRE =
  'the credentials expire before the run ends (see above); nothing was created. Refresh them or pass --accept-credential-expiry.';

/** Why the shadows' cost stops the run: unknown, not acknowledged, or above --max-shadow-cost-usd. */
function costProblem(plan: ShadowPlan, input: ShadowAbInput): string | undefined {
  if (plan.estimateUsd === undefined) return `the shadows' price is unknown (${plan.priceSource}); nothing was created`;
  if (input.maxShadowCostUsd === undefined)
    return `--shadow creates ${plan.fleets.length} more fleet(s) of ${plan.instances} × ${plan.instanceType ?? 'unknown'} (≈ ${usd(plan.estimateUsd)}); acknowledge it with --max-shadow-cost-usd N (N ≥ ${Math.ceil(plan.estimateUsd)}); nothing was created`;
  if (plan.estimateUsd > input.maxShadowCostUsd)
    return `the shadows' estimate ${usd(plan.estimateUsd)} exceeds --max-shadow-cost-usd ${input.maxShadowCostUsd} (shorten --duration, compare fewer strategies, or raise the limit); nothing was created`;
  return undefined;
}

function runShadows(
  input: ShadowAbInput,
  plan: ShadowPlan,
  targets: ReadonlyMap<string, SageMakerTarget>,
  signal: AbortSignal,
): Promise<ShadowOutcome> {
  const { io } = input;
  return new ShadowAb(
    {
      sagemaker: input.target.sagemaker!,
      renewSageMaker: input.renewSageMaker,
      clock: input.clock,
      log: (line) => io.stderr.write(`${line}\n`),
      runWorkload: (fleet: ShadowFleet, runSignal: AbortSignal) =>
        measureRun(
          sageMakerBenchPlan(input.benchFlags, targets.get(fleet.endpointName)!),
          { io, quiet: input.quiet, label: fleet.strategy.label },
          runSignal,
        ),
    },
    {
      plan,
      signal,
      pollIntervalMs: input.pollIntervalMs,
      createTimeoutMs: input.createTimeoutMs,
      cleanupTimeoutMs: input.cleanupTimeoutMs,
      retry: input.retry,
    },
  ).run();
}

function shadowExitCode(outcome: ShadowOutcome, input: ShadowAbInput, caught: AbSignal | undefined): number {
  const { io, facts } = input;
  if (!outcome.finished) {
    const left = [...outcome.left.components, ...outcome.left.endpoints, ...outcome.left.configs];
    io.stderr.write(
      `prefix-router ab: the shadow resources are NOT all deleted: ${left.join(', ')} ${left.length === 1 ? 'is' : 'are'} left${outcome.failure ? ` (the run stopped: ${outcome.failure.message})` : ''}.\n` +
        `Still billing: ${outcome.leftInstances} instance(s) on ${outcome.left.endpoints.length} shadow endpoint(s)${outcome.leftHourlyUsd !== undefined ? ` ≈ ${usd(outcome.leftHourlyUsd)}/h` : ''} until deleted. The live endpoint ${facts.endpointName} was not changed.\n` +
        `Delete them with:\n${outcome.finishCommands.map((c) => `  ${c}`).join('\n')}\n`,
    );
    return AbExitCode.LeftBehind;
  }
  const ended = endedAbStatus(
    outcome,
    io,
    caught,
    'every shadow resource was deleted; the live endpoint was not changed',
  );
  return ended.status ?? (ended.allFailed > 0 ? AbExitCode.RunFailed : AbExitCode.Done);
}

/** The shadow outcome in the A/B report's shape (one report, one renderer for every mode). */
function reportOutcome(outcome: ShadowOutcome, plan: ShadowPlan, runId: string): AbOutcome {
  const deleted = outcome.created.configs.filter((c) => !outcome.left.configs.includes(c));
  return {
    runs: outcome.runs.map((r) => ({
      label: r.label,
      routing: r.fleet.strategy.routing,
      configName: r.fleet.configName,
      result: r.result,
      wallWindow: r.wallWindow,
      instanceCounts: r.instanceCounts,
      gpusPerInstance: gpusPerInstance(plan.facts.variants[0]?.instanceType),
    })),
    interrupted: outcome.interrupted,
    failure: outcome.failure,
    restored: true,
    finished: outcome.finished,
    createdConfigs: outcome.created.configs,
    deletedConfigs: deleted,
    leftConfigs: outcome.left.configs,
    finishCommands: outcome.finishCommands,
    notes: [
      `The live endpoint ${plan.facts.endpointName} was only read: every resource the run created is named ${plan.fleets.map((_, i) => `${shadowPrefix(runId, i)}…`).join(' or ')}.`,
      ...outcome.notes,
    ],
    shadow: { created: outcome.created, left: outcome.left, leftHourlyUsd: outcome.leftHourlyUsd },
  };
}
