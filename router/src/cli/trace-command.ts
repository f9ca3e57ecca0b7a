import { Command } from 'commander';
import { S3Client } from '@aws-sdk/client-s3';
import { CHARS_PER_TOKEN } from '../state/block-hash';
import { BUILTIN_PROFILE_NAMES, DEFAULT_PROFILE_NAME, resolveProfile } from '../emulator/engine-profile';
import { INSTANCES_RANGE } from '../sim/simulator';
import { parseWorkloadSpec } from '../workload';
import {
  BLOCK_TOKENS_RANGE,
  CAPTURE_FORMATS,
  DEFAULT_TRACE_BLOCK_TOKENS,
  DEFAULT_OUTPUT_TOKENS,
  DEFAULT_REORDER_WINDOW_MS,
  formatImportSummary,
  importTrace,
  loadTokenizer,
  writeCapture,
  type CaptureEncodingChoice,
  type CaptureFormatOption,
  type ImportReport,
} from '../trace-import';
import { integerFlag, numberFlag, optionalIntegerFlag, textFlag } from './flag-values';
import { recognizingCaptureFiles } from './workload-flag';
import { ConfigError } from '../common/config-error';

/**
 * `prefix-router trace`: traces from a team's own traffic.
 * - `trace import`: SageMaker Data Capture files or OpenAI request logs (files, directories, s3://) → a
 *   privacy-safe Mooncake trace that simulate, bench and ab replay (docs/own-traffic.md);
 * - `trace write-capture`: a workload written as Data Capture files and an OpenAI request log, to rehearse the
 *   import with no endpoint.
 */
export function register(program: Command): void {
  const trace = program
    .command('trace')
    .description('turn captured traffic (SageMaker Data Capture, request logs) into replayable traces');
  trace
    .command('import')
    .description(
      'import Data Capture files or OpenAI request logs (files, directories, s3://bucket/prefix) as a Mooncake trace: lengths, times and keyed block ids, no prompt text',
    )
    .argument(
      '<input...>',
      'a file, a directory (read recursively, oldest file first) or s3://bucket/prefix (key order)',
    )
    .requiredOption('--out <file>', 'the Mooncake JSONL trace to write')
    .option(
      '--format <format>',
      `input format: ${CAPTURE_FORMATS.join(', ')} (auto: per file, from its first line)`,
      'auto',
    )
    .option(
      '--tokenizer <file>',
      `the model's tokenizer.json (default: the router's estimate, ${CHARS_PER_TOKEN} characters per token)`,
    )
    .option(
      '--block-tokens <n>',
      `tokens per hash id, ${BLOCK_TOKENS_RANGE.min}..${BLOCK_TOKENS_RANGE.max}`,
      String(DEFAULT_TRACE_BLOCK_TOKENS),
    )
    .option('--sampling <percent>', "the endpoint's Data Capture InitialSamplingPercentage, (0, 100]", '100')
    .option(
      '--default-output-tokens <n>',
      'output length of a request with neither captured usage nor max_tokens, 1..1000000',
      String(DEFAULT_OUTPUT_TOKENS),
    )
    .option(
      '--reorder-window <seconds>',
      'requests up to this far out of time order are put back in order, 0..86400',
      String(DEFAULT_REORDER_WINDOW_MS / 1000),
    )
    .option(
      '--instances <n>',
      `fleet size for the hit-rate ceilings, ${INSTANCES_RANGE.min}..${INSTANCES_RANGE.max}`,
      '7',
    )
    .option(
      '--profile <name|file>',
      `engine profile for the ceilings' KV capacity: ${BUILTIN_PROFILE_NAMES.join(', ')}, or a JSON file`,
      DEFAULT_PROFILE_NAME,
    )
    .option('--region <region>', 'AWS region of the s3:// inputs (default: the SDK default chain, AWS_REGION)')
    .option('--strict', 'stop at the first bad line instead of counting it')
    .action(async (inputs: string[], flags: Record<string, unknown>) => {
      await runTraceImport(inputs, flags);
    });
  trace
    .command('write-capture')
    .description(
      'write a workload as SageMaker Data Capture files (AWS S3 layout) and/or an OpenAI request log, to rehearse trace import',
    )
    .requiredOption(
      '--workload <spec>',
      'long-context, short-chat, shared-system or trace:FILE, with ?options (docs/workloads.md)',
    )
    .option('--capture-dir <dir>', 'directory standing in for the DestinationS3Uri')
    .option('--request-log <file>', 'an OpenAI request log (JSONL) to write')
    .option('--endpoint <name>', 'endpoint name in the capture paths', 'my-llm')
    .option('--variant <name>', 'variant name in the capture paths', 'AllTraffic')
    .option(
      '--encoding <encoding>',
      'json (content type in JsonContentTypes), base64 (not listed), or alternate',
      'json',
    )
    .option('--max-requests <n>', 'write at most this many requests')
    .action(async (flags: Record<string, unknown>) => {
      await runWriteCapture(flags);
    });
}

export async function runTraceImport(
  inputs: readonly string[],
  flags: Record<string, unknown>,
  print: (text: string) => void = (t) => process.stdout.write(`${t}\n`),
): Promise<ImportReport> {
  const format = textFlag(flags, 'format') ?? 'auto';
  if (!(CAPTURE_FORMATS as readonly string[]).includes(format))
    throw new ConfigError([`--format must be one of ${CAPTURE_FORMATS.join(', ')} (got ${JSON.stringify(format)})`]);
  if (inputs.length === 0)
    throw new ConfigError(['give at least one INPUT: a file, a directory or s3://bucket/prefix']);
  const out = textFlag(flags, 'out');
  if (out === undefined || out.trim() === '') throw new ConfigError(['--out FILE is required']);
  let profile;
  try {
    profile = resolveProfile(textFlag(flags, 'profile') ?? DEFAULT_PROFILE_NAME);
  } catch (err) {
    throw new ConfigError([`--profile: ${(err as Error).message}`]);
  }
  const instances = integerFlag(
    'instances',
    textFlag(flags, 'instances') ?? '7',
    INSTANCES_RANGE.min,
    INSTANCES_RANGE.max,
  );
  const tokenizerPath = textFlag(flags, 'tokenizer');
  const region = textFlag(flags, 'region');
  const report = await importTrace({
    inputs,
    out,
    format: format as CaptureFormatOption,
    blockTokens: integerFlag(
      'block-tokens',
      textFlag(flags, 'blockTokens') ?? String(DEFAULT_TRACE_BLOCK_TOKENS),
      BLOCK_TOKENS_RANGE.min,
      BLOCK_TOKENS_RANGE.max,
    ),
    tokenizer: tokenizerPath === undefined ? undefined : loadTokenizer(tokenizerPath),
    samplingPercent: numberFlag('sampling', textFlag(flags, 'sampling') ?? '100', 0, 100, true),
    defaultOutputTokens: integerFlag(
      'default-output-tokens',
      textFlag(flags, 'defaultOutputTokens') ?? String(DEFAULT_OUTPUT_TOKENS),
      1,
      1_000_000,
    ),
    reorderWindowMs:
      numberFlag(
        'reorder-window',
        textFlag(flags, 'reorderWindow') ?? String(DEFAULT_REORDER_WINDOW_MS / 1000),
        0,
        86_400,
      ) * 1000,
    strict: flags.strict === true,
    fleet: {
      instances,
      kvCapacityBlocks: profile.kvCapacityBlocks,
      kvBlockTokens: profile.blockTokens,
      label: `${instances} × ${profile.name}`,
    },
    sources: inputs.some((i) => i.startsWith('s3://')) ? { s3: new S3Client(region ? { region } : {}) } : undefined,
  });
  print(formatImportSummary(report));
  print(
    `replay: prefix-router simulate --workload 'trace:${out}${report.samplingPercent < 100 ? `?speedup=${Number((100 / report.samplingPercent).toFixed(3))}` : ''}' --instances ${instances}`,
  );
  return report;
}

const ENCODINGS: readonly CaptureEncodingChoice[] = ['json', 'base64', 'alternate'];

export async function runWriteCapture(
  flags: Record<string, unknown>,
  print: (text: string) => void = (t) => process.stdout.write(`${t}\n`),
): Promise<void> {
  const captureDir = textFlag(flags, 'captureDir');
  const requestLog = textFlag(flags, 'requestLog');
  if (captureDir === undefined && requestLog === undefined)
    throw new ConfigError(['give --capture-dir DIR, --request-log FILE, or both']);
  const encoding = textFlag(flags, 'encoding') ?? 'json';
  if (!(ENCODINGS as readonly string[]).includes(encoding))
    throw new ConfigError([`--encoding must be one of ${ENCODINGS.join(', ')} (got ${JSON.stringify(encoding)})`]);
  const workload = recognizingCaptureFiles(() => parseWorkloadSpec(textFlag(flags, 'workload') ?? ''));
  const result = await writeCapture(workload, {
    captureDir,
    requestLog,
    endpointName: textFlag(flags, 'endpoint'),
    variantName: textFlag(flags, 'variant'),
    encoding: encoding as CaptureEncodingChoice,
    maxRequests: optionalIntegerFlag('max-requests', textFlag(flags, 'maxRequests'), 1, 100_000_000),
  });
  print(
    `wrote ${result.requests} requests to ${result.files.length} file(s)${captureDir ? ` under ${captureDir}` : ''}${requestLog ? `${captureDir ? ' and' : ''} ${requestLog}` : ''}`,
  );
}
