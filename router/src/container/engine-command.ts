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
 * {index} and {tp} are replaced per engine.
 */
export const DEFAULT_ENGINE_PROGRAM = ['python3', '-m', 'vllm.entrypoints.openai.api_server'] as const;

export const PLACEHOLDERS = ['port', 'gpus', 'index', 'tp'] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];
export type PlaceholderValues = Readonly<Record<Placeholder, string>>;

/** SM_VLLM_* variables the container sets itself per engine. */
const CONTAINER_OWNED_FLAGS = new Set(['host', 'port']);

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
    problems.push(`${variable} may use only the placeholders ${PLACEHOLDERS.map((p) => `{${p}}`).join(', ')} (got ${unknown.map((p) => `{${p}}`).join(', ')})`);
  }
  return problems;
}

/** The template's argv with placeholders replaced. */
export function renderCommandTemplate(template: string, values: PlaceholderValues): string[] {
  return splitCommandLine(template).map((word) => word.replace(/\{(port|gpus|index|tp)\}/g, (_, name: Placeholder) => values[name]));
}

/** `SM_VLLM_MAX_MODEL_LEN` → `max-model-len`. */
export function flagForSmVllmVariable(name: string): string {
  return name.slice('SM_VLLM_'.length).toLowerCase().replace(/_/g, '-');
}

/**
 * vLLM flags from the SM_VLLM_* variables, in name order (deterministic argv), without the ones the container
 * owns. `overrides` replace or add flags (e.g. tensor-parallel-size in multi-engine mode).
 */
export function smVllmArgs(env: Readonly<Record<string, string | undefined>>, overrides: Readonly<Record<string, string>> = {}): string[] {
  const flags = new Map<string, string>();
  for (const name of Object.keys(env).filter((n) => n.startsWith('SM_VLLM_') && n.length > 'SM_VLLM_'.length).sort()) {
    const flag = flagForSmVllmVariable(name);
    if (CONTAINER_OWNED_FLAGS.has(flag)) continue;
    flags.set(flag, env[name] ?? '');
  }
  for (const [flag, v] of Object.entries(overrides)) flags.set(flag, v);
  const args: string[] = [];
  for (const [flag, v] of flags) {
    const trimmed = v.trim();
    if (trimmed.toLowerCase() === 'false') continue;
    args.push(`--${flag}`);
    if (trimmed !== '' && trimmed.toLowerCase() !== 'true') args.push(v);
  }
  return args;
}

/** The DLC's server on 127.0.0.1:{port}. */
export function defaultEngineArgv(env: Readonly<Record<string, string | undefined>>, port: number, tensorParallelSize: number | undefined): string[] {
  const overrides: Record<string, string> = {};
  if (tensorParallelSize !== undefined) overrides['tensor-parallel-size'] = String(tensorParallelSize);
  return [...DEFAULT_ENGINE_PROGRAM, '--host', '127.0.0.1', '--port', String(port), ...smVllmArgs(env, overrides)];
}

/** A flag with a word that names a secret: `--api-key`, `--hf-token`, `--db-password` (not `--tokenizer-mode`). */
const SECRET_FLAG = /^--?(?:[a-z0-9]+-)*(?:keys?|tokens?|secrets?|passwords?|credentials?)(?:-[a-z0-9]+)*$/i;

/** The argv for logs: values of flags that look secret (`--api-key x`, `--hf-token=x`) replaced by `***`. */
export function redactArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i];
    const eq = word.indexOf('=');
    if (word.startsWith('-') && eq > 0 && SECRET_FLAG.test(word.slice(0, eq))) {
      out.push(`${word.slice(0, eq)}=***`);
    } else if (SECRET_FLAG.test(word) && i + 1 < argv.length && !argv[i + 1].startsWith('--')) {
      out.push(word, '***');
      i++;
    } else {
      out.push(word);
    }
  }
  return out;
}
