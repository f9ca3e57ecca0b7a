import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { SageMakerClient } from '@aws-sdk/client-sagemaker';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { LiveBenchmarkResult } from '../benchmark';
import { cloudWatchSection } from '../aws/ab-report';
import { readCloudWatchView, runWallWindow, type CloudWatchView } from '../aws/cloudwatch-view';
import type { SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import { discoverModel, ModelDiscoveryError, parseTargetUrl, type LiveBenchmarkOptions } from '../benchmark';
import {
  AwsSetupError,
  checkRegionAndCredentials,
  describeEndpointFacts,
  gpusPerInstance,
  requireInService,
  servedModelName,
  type EndpointFacts,
} from '../aws/endpoint-facts';
import { createRuntimeClient, PrefixAwareLlmClient } from '../aws/runtime-client';
import { describeComponentFacts, hostsInferenceComponents } from '../aws/inference-components';
import { isValidInferenceComponentName } from '../protocol/inference-component';
import { SAGEMAKER_NAME, SAGEMAKER_NAME_RULE } from '../aws/sagemaker-names';
import { SageMakerRuntimeTransport } from '../aws/sagemaker-transport';
import { systemClock, type Clock } from '../aws/throttling-retry';
import type { WorkloadRequest } from '../workload/workload-request';
import { Command } from 'commander';
import {
  defineBenchOptions,
  parseBenchFlags,
  parseCommandLine,
  type BenchSettings,
  type RawBenchFlags,
} from './bench-flags';
import { runBenchWithOutcome, type BenchIo } from './bench-run';
import { ConfigError } from '../common/config-error';

/**
 * `prefix-router bench --sagemaker-endpoint NAME`: the live benchmark against a SageMaker endpoint, through the
 * AWS SDK (invoke API) or the endpoint's OpenAI-compatible path (openai API). Region, credentials, the endpoint's
 * existence and state and the served model are checked before the first request; every run is bounded by a
 * request count and a duration.
 */
export const SAGEMAKER_DEFAULT_DURATION_S = '600';
export const SAGEMAKER_DEFAULT_MAX_REQUESTS = '10000';
const PREFIX_AWARE_ID = /^[\x20-\x7e]{1,64}$/;

export interface SageMakerTargetDeps {
  readonly sagemaker?: SageMakerClient;
  readonly cloudwatch?: CloudWatchClient;
  readonly runtime?: SageMakerRuntimeClient;
  readonly env?: NodeJS.ProcessEnv;
  readonly clock?: Clock;
}

export interface SageMakerTarget {
  readonly endpointName: string;
  readonly region: string;
  readonly api: 'invoke' | 'openai';
  /** Base URL of the runtime API (the override when set). */
  readonly runtimeBase: string;
  /** True when AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME points somewhere else and the control plane was not asked. */
  readonly overridden: boolean;
  readonly facts: EndpointFacts | undefined;
  readonly model: string;
  readonly runtime: SageMakerRuntimeClient;
  readonly sagemaker: SageMakerClient | undefined;
  readonly notes: readonly string[];
  /** The inference component every request names (InferenceComponentName), when one was given. */
  readonly inferenceComponent?: string;
}

/** Resolves and checks a SageMaker target; throws AwsSetupError / ConfigError saying what is missing. */
export async function resolveSageMakerTarget(
  input: {
    endpointName: string;
    region?: string;
    api?: string;
    model?: string;
    maxSockets?: number;
    inferenceComponent?: string;
  },
  deps: SageMakerTargetDeps = {},
): Promise<SageMakerTarget> {
  const env = deps.env ?? process.env;
  const clock = deps.clock ?? systemClock;
  const problems: string[] = [];
  if (!SAGEMAKER_NAME.test(input.endpointName))
    problems.push(`--sagemaker-endpoint must be ${SAGEMAKER_NAME_RULE} (got ${JSON.stringify(input.endpointName)})`);
  const api = input.api ?? 'invoke';
  if (api !== 'invoke' && api !== 'openai')
    problems.push(`--api must be invoke or openai (got ${JSON.stringify(api)})`);
  const component = input.inferenceComponent;
  if (component !== undefined) {
    if (!isValidInferenceComponentName(component))
      problems.push(
        `--inference-component must be 1 to 63 letters, digits and inner hyphens (got ${JSON.stringify(component)})`,
      );
    if (api !== 'invoke')
      problems.push(
        '--inference-component applies with --api invoke (InvokeEndpointWithResponseStream carries InferenceComponentName)',
      );
  }
  if (problems.length > 0) throw new ConfigError(problems);

  const runtime = deps.runtime ?? createRuntimeClient({ region: input.region, maxSockets: input.maxSockets });
  const region = await checkRegionAndCredentials(runtime.config, 'the SageMaker runtime API');
  const runtimeOverride = env.AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME ?? env.AWS_ENDPOINT_URL;
  const controlOverride = env.AWS_ENDPOINT_URL_SAGEMAKER ?? env.AWS_ENDPOINT_URL;
  const runtimeBase = (runtimeOverride ?? `https://runtime.sagemaker.${region}.amazonaws.com`).replace(/\/+$/, '');
  const notes: string[] = [];
  let facts: EndpointFacts | undefined;
  let sagemaker = deps.sagemaker;
  let model = input.model;
  const overridden = runtimeOverride !== undefined && controlOverride === undefined && deps.sagemaker === undefined;
  if (overridden) {
    notes.push(
      `The runtime API is overridden (AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME=${runtimeBase}) and the control plane is not, so DescribeEndpoint was skipped: nothing checked that '${input.endpointName}' exists or is InService.`,
    );
    // With a component, the body names it (an adapter is served under its own name); else the first model listed.
    model ??= component ?? (await discoverModel(parseTargetUrl(runtimeBase)));
  } else {
    sagemaker ??= new SageMakerClient({ region });
    facts = await describeEndpointFacts(sagemaker, input.endpointName, clock);
    requireInService(facts);
    if (component !== undefined) {
      const described = await describeComponentFacts(sagemaker, input.endpointName, component, clock);
      model ??= described.servedModel ?? component;
    } else if (hostsInferenceComponents(facts)) {
      // Its variant names no model; the caller decides (bench asks for --inference-component, ab refuses the endpoint).
    } else if (model === undefined) {
      const modelName = facts.variants[0]?.modelName;
      model = modelName === undefined ? undefined : await servedModelName(sagemaker, modelName, clock);
      if (model === undefined) {
        throw new AwsSetupError(
          'unsupported',
          `cannot tell which model '${input.endpointName}' serves (no SM_VLLM_MODEL / SM_VLLM_SERVED_MODEL_NAME / HF_MODEL_ID in its model environment); pass --model`,
        );
      }
    }
  }
  return {
    endpointName: input.endpointName,
    region,
    api: api as 'invoke' | 'openai',
    runtimeBase,
    overridden,
    facts,
    model: model ?? '',
    runtime,
    sagemaker,
    notes,
    ...(component !== undefined ? { inferenceComponent: component } : {}),
  };
}

/** What is wrong with a --prefix-aware-id (SageMaker's PrefixAwareId: 1-64 printable ASCII), or undefined. */
export function prefixAwareIdProblem(id: string | undefined): string | undefined {
  if (id === undefined || PREFIX_AWARE_ID.test(id)) return undefined;
  return `--prefix-aware-id must be 1 to 64 printable ASCII characters (got ${id.length} characters)`;
}

/** The bench settings (all the usual flags validated as for --url) and the transport of a SageMaker target. */
export function sageMakerBenchPlan(
  flags: RawBenchFlags,
  target: SageMakerTarget,
  targetVariantOf?: (request: WorkloadRequest) => string | undefined,
): { settings: BenchSettings; extra: () => Partial<LiveBenchmarkOptions> } {
  const problems: string[] = [];
  if (flags.url !== undefined) problems.push('give --url or --sagemaker-endpoint, not both');
  const hintProblem = prefixAwareIdProblem(flags.prefixAwareId);
  if (hintProblem !== undefined) problems.push(hintProblem);
  if (flags.backendMetrics !== undefined && flags.backendMetrics.length > 0)
    problems.push(
      "--backend-metrics does not apply to a SageMaker endpoint (its engines are not reachable); CloudWatch has the endpoint's metrics",
    );
  if (problems.length > 0) throw new ConfigError(problems);
  const path =
    target.api === 'openai'
      ? `/endpoints/${encodeURIComponent(target.endpointName)}/openai`
      : `/endpoints/${encodeURIComponent(target.endpointName)}`;
  const settings = parseBenchFlags({
    ...flags,
    url: `${target.runtimeBase}${path}`,
    model: target.model,
    duration: flags.duration ?? SAGEMAKER_DEFAULT_DURATION_S,
    maxRequests: flags.maxRequests ?? SAGEMAKER_DEFAULT_MAX_REQUESTS,
  });
  if (target.api === 'openai') {
    const first = settings.workload.requests().next().value as WorkloadRequest | undefined;
    const openAiProblems: string[] = [];
    if (first !== undefined && first.kind !== 'chat')
      openAiProblems.push('--api openai serves chat completions only; use a chat workload (api=chat) or --api invoke');
    if (settings.headers.authorization === undefined && !target.overridden) {
      openAiProblems.push(
        "--api openai needs a bearer token: --header 'authorization: Bearer TOKEN' (create one with the SageMaker Python SDK's generate_token; it needs sagemaker:CallWithBearerToken)",
      );
    }
    if (targetVariantOf !== undefined) openAiProblems.push('--api openai cannot target a variant; use --api invoke');
    if (openAiProblems.length > 0) throw new ConfigError(openAiProblems);
    return { settings, extra: () => ({}) };
  }
  const instanceHeader = settings.instanceHeader.toLowerCase();
  return {
    settings,
    // A fresh transport per run: the run closes it (the SDK client it shares is the caller's).
    extra: () => ({
      transport: new SageMakerRuntimeTransport({
        client: new PrefixAwareLlmClient({
          endpointName: target.endpointName,
          client: target.runtime,
          ...(target.inferenceComponent !== undefined ? { inferenceComponentName: target.inferenceComponent } : {}),
        }),
        instanceHeader,
        prefixAwareId: flags.prefixAwareId,
        targetVariantOf,
      }),
    }),
  };
}

/** The CLI path: resolve, check, run, report. Exit codes as `bench` (1 for a setup error). */
export async function runSageMakerBench(
  flags: RawBenchFlags,
  io: BenchIo,
  deps: SageMakerTargetDeps = {},
): Promise<number> {
  let target: SageMakerTarget | undefined;
  try {
    if (flags.url !== undefined) throw new ConfigError(['give --url or --sagemaker-endpoint, not both']);
    target = await resolveSageMakerTarget(
      {
        endpointName: flags.sagemakerEndpoint ?? '',
        region: flags.region,
        api: flags.api,
        model: flags.model,
        ...(flags.inferenceComponent !== undefined ? { inferenceComponent: flags.inferenceComponent } : {}),
      },
      deps,
    );
    if (
      target.facts !== undefined &&
      target.inferenceComponent === undefined &&
      hostsInferenceComponents(target.facts)
    ) {
      // SageMaker refuses an invocation without InferenceComponentName on such an endpoint.
      throw new ConfigError([
        `endpoint '${target.endpointName}' hosts inference components: pass --inference-component NAME (the model or adapter to invoke)`,
      ]);
    }
    const { settings, extra } = sageMakerBenchPlan(flags, target);
    if (flags.cloudwatch && target.facts === undefined) {
      throw new ConfigError([
        '--cloudwatch needs the SageMaker control plane to know the variants: AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME alone points only the runtime API elsewhere',
      ]);
    }
    for (const note of target.notes) io.stderr.write(`note: ${note}\n`);
    const clock = deps.clock ?? systemClock;
    const startedAt = clock.now();
    const outcome = await runBenchWithOutcome(settings, io, extra());
    if (flags.cloudwatch && target.facts !== undefined) {
      const file = await writeBenchCloudWatch({
        facts: target.facts,
        cloudwatch: deps.cloudwatch ?? new CloudWatchClient({ region: target.region }),
        ownsClient: deps.cloudwatch === undefined,
        result: outcome.result,
        label: settings.label,
        startedAt,
        delayMs: settings.cloudWatchDelayMs,
        clock,
        directory: dirname(outcome.files.json),
        log: (line) => io.stderr.write(`${line}\n`),
      });
      io.stdout.write(`cloudwatch: ${file}\n`);
    }
    return outcome.exitCode;
  } catch (err) {
    if (err instanceof AwsSetupError || err instanceof ConfigError || err instanceof ModelDiscoveryError) {
      io.stderr.write(`prefix-router bench: ${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    if (deps.runtime === undefined) target?.runtime.destroy();
    if (deps.sagemaker === undefined) target?.sagemaker?.destroy();
  }
}

/** `prefix-router bench` arguments (without the command name) parsed in-process into raw flags; throws ConfigError. */
export function parseRawBenchArgv(argv: readonly string[]): RawBenchFlags {
  return parseCommandLine<RawBenchFlags>(defineBenchOptions(new Command('bench')), argv);
}

/** CloudWatch's view of one bench run, every variant of the endpoint, written as cloudwatch.md / .json beside the report. */
async function writeBenchCloudWatch(input: {
  facts: EndpointFacts;
  cloudwatch: CloudWatchClient;
  ownsClient: boolean;
  result: LiveBenchmarkResult;
  label: string;
  startedAt: number;
  delayMs: number;
  clock: Clock;
  directory: string;
  log: (line: string) => void;
}): Promise<string> {
  const { result, clock } = input;
  // The whole run, warm-up included, as the client's request count is.
  const window = runWallWindow(input.startedAt, result);
  const wait = window.endMs + input.delayMs - clock.now();
  if (wait > 0) {
    input.log(`waiting ${Math.ceil(wait / 1000)} s for CloudWatch to publish the run's metrics`);
    await clock.sleep(wait);
  }
  const views: Record<string, CloudWatchView> = {};
  let error: string | undefined;
  try {
    for (const v of input.facts.variants) {
      views[v.name] = await readCloudWatchView({
        cloudwatch: input.cloudwatch,
        target: { endpointName: input.facts.endpointName, variantName: v.name },
        window,
        publishSeconds: input.facts.metricPublishSeconds,
        clock,
      });
    }
  } catch (err) {
    error = (err as Error).message;
  } finally {
    if (input.ownsClient) input.cloudwatch.destroy();
  }
  const lines = [
    `# CloudWatch's view of ${input.label} on ${input.facts.endpointName}`,
    '',
    "The client-side figures are in report.md (measured by prefix-router on the machine that sent the requests); these are CloudWatch's.",
    '',
    ...cloudWatchSection([
      {
        label: input.label,
        sent: result.sent,
        gpusPerInstance: gpusPerInstance(input.facts.variants[0]?.instanceType),
        cloudwatch: error === undefined ? views : undefined,
        cloudwatchError: error,
      },
    ]),
  ];
  const notes = [...new Set(Object.values(views).flatMap((v) => v.notes))];
  if (notes.length > 0) lines.push('## Notes', '', ...notes.map((n) => `- ${n}`), '');
  const file = join(input.directory, 'cloudwatch.md');
  await writeFile(file, lines.join('\n'));
  await writeFile(
    join(input.directory, 'cloudwatch.json'),
    `${JSON.stringify({ endpointName: input.facts.endpointName, label: input.label, window: { start: new Date(window.startMs).toISOString(), end: new Date(window.endMs).toISOString() }, views, error: error ?? null }, null, 2)}\n`,
  );
  return file;
}
