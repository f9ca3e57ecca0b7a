import { existsSync, readdirSync } from 'node:fs';

/**
 * How one engine process is started: an argv, never a shell line, so signals reach the engine itself.
 *
 * Default: the vLLM DLC's own server command, `python3 -m vllm.entrypoints.openai.api_server`, with the DLC's
 * SM_VLLM_* convention (SM_VLLM_FOO_BAR=x → `--foo-bar x`; `true` or empty → bare `--foo-bar`; `false` →
 * dropped), so the construct's VllmEngineOptions work unchanged. The container owns --host, --port and, in
 * multi-engine mode, --tensor-parallel-size.
 *
 * Override: PREFIX_ROUTER_ENGINE_COMMAND, a command line split into words like a shell would (quotes and
 * backslashes; no variables, globbing or pipes: wrap it in `sh -c '...'` for those) in which {port}, {gpus},
 * {index}, {tp} and, with PREFIX_ROUTER_ENGINE_KV_EVENTS=on, {kv_events_config} (the engine's --kv-events-config
 * JSON, one word) are replaced per engine.
 */
export const DEFAULT_ENGINE_PROGRAM = ['python3', '-m', 'vllm.entrypoints.openai.api_server'] as const;

export const PLACEHOLDERS = ['port', 'gpus', 'index', 'tp', 'kv_events_config'] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];
export type PlaceholderValues = Readonly<Record<Placeholder, string>>;

/** SM_VLLM_* variables the container sets itself per engine. */
const CONTAINER_OWNED_FLAGS = new Set(['host', 'port']);
/** The vLLM flag that carries an engine's KV events settings (its own with PREFIX_ROUTER_ENGINE_KV_EVENTS=on). */
export const KV_EVENTS_CONFIG_FLAG = 'kv-events-config';

export class CommandLineError extends Error {}

/** Splits a command line into words: '…' keeps everything literally, "…" and bare words honour backslashes. */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1])) word += line[++i];
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\') {
      if (i + 1 >= line.length) throw new CommandLineError('ends with a lone backslash');
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote !== undefined) throw new CommandLineError(`has an unclosed ${quote} quote`);
  if (inWord) words.push(word);
  return words;
}

/** The placeholders `{name}` used in the template that are not known ones. */
export function unknownPlaceholders(template: string): string[] {
  const found = [...template.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]);
  return [...new Set(found.filter((name) => !(PLACEHOLDERS as readonly string[]).includes(name)))];
}

/** Checks a PREFIX_ROUTER_ENGINE_COMMAND template; returns problems (empty when fine). */
export function engineCommandProblems(template: string, variable: string): string[] {
  const problems: string[] = [];
  let words: string[] = [];
  try {
    words = splitCommandLine(template);
  } catch (err) {
    problems.push(`${variable} ${(err as Error).message} (got ${JSON.stringify(template)})`);
    return problems;
  }
  if (words.length === 0) problems.push(`${variable} must name a program (got ${JSON.stringify(template)})`);
  const unknown = unknownPlaceholders(template);
  if (unknown.length > 0) {
    problems.push(
      `${variable} may use only the placeholders ${PLACEHOLDERS.map((p) => `{${p}}`).join(', ')} (got ${unknown.map((p) => `{${p}}`).join(', ')})`,
    );
  }
  return problems;
}

const PLACEHOLDER_PATTERN = new RegExp(`\\{(${PLACEHOLDERS.join('|')})\\}`, 'g');

/** The template's argv with placeholders replaced. */
export function renderCommandTemplate(template: string, values: PlaceholderValues): string[] {
  return splitCommandLine(template).map((word) =>
    word.replace(PLACEHOLDER_PATTERN, (_, name: Placeholder) => values[name]),
  );
}

/** `SM_VLLM_MAX_MODEL_LEN` → `max-model-len`. */
export function flagForSmVllmVariable(name: string): string {
  return name.slice('SM_VLLM_'.length).toLowerCase().replace(/_/g, '-');
}

/**
 * Flags whose value vLLM takes as one word even when it is a JSON array (typed json.loads, or `action="append"`
 * for --middleware); the DLC's sagemaker_args.py keeps these whole too.
 */
const SINGLE_WORD_FLAGS = new Set(['allowed-origins', 'allowed-methods', 'allowed-headers', 'middleware']);

/** One element of a JSON-array value as one argv word, as the DLC renders it. */
function jsonElementWord(element: unknown): string {
  if (element === null) return '';
  if (typeof element === 'object') return JSON.stringify(element);
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- objects and null are handled above: a primitive
  return String(element);
}

/** `{...} {...}`: the objects of a whitespace-separated run of JSON objects, or undefined if the value is not one. */
export function jsonObjectSequence(value: string): Array<Record<string, unknown>> | undefined {
  const objects: Array<Record<string, unknown>> = [];
  let i = 0;
  while (i < value.length) {
    if (value[i] !== '{') return undefined;
    // Find the brace closing this object, skipping strings; JSON.parse then checks the text.
    let depth = 0;
    let end = -1;
    for (let j = i, inString = false; j < value.length; j++) {
      const c = value[j];
      if (inString) {
        if (c === '\\') j++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') {
        depth--;
        if (depth === 0) {
          end = j;
          break;
        }
      }
    }
    if (end < 0) return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(value.slice(i, end + 1));
    } catch {
      return undefined;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    objects.push(parsed as Record<string, unknown>);
    i = end + 1;
    while (i < value.length && /\s/.test(value[i])) i++;
  }
  return objects.length > 0 ? objects : undefined;
}

/**
 * The words after `--flag` for one SM_VLLM_* value, the DLC's way (aws/deep-learning-containers
 * scripts/docker/vllm/sagemaker_args.py): `true` or empty → the bare flag ([]); `false` → no flag (undefined); a
 * JSON array → one word per element (an empty array → no flag), except for the flags vLLM takes whole; several
 * JSON objects separated by spaces → one word per object; anything else → the value as one word.
 */
export function smVllmValueWords(flag: string, value: string): string[] | undefined {
  const trimmed = value.trim();
  const lowered = trimmed.toLowerCase();
  if (lowered === 'true' || trimmed === '') return [];
  if (lowered === 'false') return undefined;
  if (SINGLE_WORD_FLAGS.has(flag)) return [value];
  if (trimmed.startsWith('[') && trimmed.endsWith(']')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      return [value];
    }
    if (!Array.isArray(parsed)) return [value];
    return parsed.length === 0 ? undefined : parsed.map(jsonElementWord);
  }
  if (trimmed.startsWith('{') && trimmed.endsWith('}')) {
    const objects = jsonObjectSequence(trimmed);
    if (objects !== undefined && objects.length > 1) return objects.map((o) => JSON.stringify(o));
  }
  return [value];
}

/**
 * vLLM flags from the SM_VLLM_* variables, in name order (deterministic argv, the DLC sorts too), without the ones
 * the container owns. `overrides` replace or add flags (e.g. tensor-parallel-size in multi-engine mode).
 */
export function smVllmArgs(
  env: Readonly<Record<string, string | undefined>>,
  overrides: Readonly<Record<string, string>> = {},
): string[] {
  const flags = new Map<string, string>();
  for (const name of Object.keys(env)
    .filter((n) => n.startsWith('SM_VLLM_') && n.length > 'SM_VLLM_'.length)
    .sort()) {
    const flag = flagForSmVllmVariable(name);
    if (CONTAINER_OWNED_FLAGS.has(flag)) continue;
    flags.set(flag, env[name] ?? '');
  }
  for (const [flag, v] of Object.entries(overrides)) flags.set(flag, v);
  const args: string[] = [];
  for (const [flag, v] of flags) {
    const words = smVllmValueWords(flag, v);
    if (words === undefined) continue;
    args.push(`--${flag}`, ...words);
  }
  return args;
}

/** Where the DLC's entrypoint looks for the model when SM_VLLM_MODEL is not set. */
export const SAGEMAKER_MODEL_DIR = '/opt/ml/model';
/** The DLC's routing middleware (X-Amzn-SageMaker-Custom-Attributes: route=/path), present in its SageMaker images. */
export const DLC_ROUTE_MIDDLEWARE_FILE = '/usr/local/bin/sagemaker_serve.py';
export const DLC_ROUTE_MIDDLEWARE = 'sagemaker_serve.SageMakerRouteMiddleware';

/** What the DLC's entrypoint looks at on disk, read once at start (tests pass their own). */
export interface DlcFiles {
  /** SAGEMAKER_MODEL_DIR exists and is not empty (SageMaker put the ModelDataUrl there). */
  readonly modelDirHasFiles: boolean;
  /** DLC_ROUTE_MIDDLEWARE_FILE exists. */
  readonly routeMiddleware: boolean;
}

/** Reads DlcFiles from this container's disk. */
export function readDlcFiles(): DlcFiles {
  let modelDirHasFiles = false;
  try {
    modelDirHasFiles = readdirSync(SAGEMAKER_MODEL_DIR).length > 0;
  } catch {
    // absent
  }
  return { modelDirHasFiles, routeMiddleware: existsSync(DLC_ROUTE_MIDDLEWARE_FILE) };
}

export type ModelSource = 'SM_VLLM_MODEL' | 'model-dir' | 'HF_MODEL_ID';

/**
 * The model the default engine serves, in the DLC's order: SM_VLLM_MODEL, else a non-empty /opt/ml/model, else
 * HF_MODEL_ID; undefined when none is given (the DLC then starts vLLM on vLLM's own default model; we refuse).
 */
export function resolveModel(
  env: Readonly<Record<string, string | undefined>>,
  files: DlcFiles,
): { model: string; source: ModelSource } | undefined {
  const explicit = env.SM_VLLM_MODEL ?? '';
  if (explicit !== '') return { model: explicit, source: 'SM_VLLM_MODEL' };
  if (files.modelDirHasFiles) return { model: SAGEMAKER_MODEL_DIR, source: 'model-dir' };
  const hf = env.HF_MODEL_ID ?? '';
  if (hf !== '') return { model: hf, source: 'HF_MODEL_ID' };
  return undefined;
}

/** The DLC's server on 127.0.0.1:{port}: the model as the DLC resolves it, the SM_VLLM_* flags, its middleware. */
export function defaultEngineArgv(
  env: Readonly<Record<string, string | undefined>>,
  port: number,
  tensorParallelSize: number | undefined,
  files: DlcFiles = { modelDirHasFiles: false, routeMiddleware: false },
  kvEventsConfig?: string,
): string[] {
  const overrides: Record<string, string> = {};
  if (tensorParallelSize !== undefined) overrides['tensor-parallel-size'] = String(tensorParallelSize);
  if (kvEventsConfig !== undefined) overrides[KV_EVENTS_CONFIG_FLAG] = kvEventsConfig;
  const model = resolveModel(env, files);
  const modelArgs = model !== undefined && model.source !== 'SM_VLLM_MODEL' ? ['--model', model.model] : [];
  const middleware = files.routeMiddleware ? ['--middleware', DLC_ROUTE_MIDDLEWARE] : [];
  return [
    ...DEFAULT_ENGINE_PROGRAM,
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    ...modelArgs,
    ...smVllmArgs(env, overrides),
    ...middleware,
  ];
}

/** The argv for logs (one home: common/redact.ts). */
export { redactArgv } from '../common/redact';
