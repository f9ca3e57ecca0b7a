import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CONTAINER_ENV } from './container-env';
import { resolveModel, type DlcFiles } from './engine-command';

/**
 * The tokenizer.json the router needs to read the engines' KV events (PREFIX_ROUTER_ENGINE_KV_EVENTS=on): requests
 * must be tokenized as the engine tokenizes them. Where it is found, in order:
 * 1. PREFIX_ROUTER_TOKENIZER, when set (a file, or `emulator`): the router checks it as `serve --tokenizer` does.
 * 2. The model directory the default engine serves (SM_VLLM_MODEL as an absolute path, else a non-empty
 *    /opt/ml/model, where SageMaker copies an S3 model before the container starts): `DIR/tokenizer.json`.
 * 3. A Hugging Face model id: the snapshot in the Hugging Face hub cache (HF_HUB_CACHE, else HF_HOME/hub, else
 *    ~/.cache/huggingface/hub) of its revision (SM_VLLM_REVISION, else `main`, through `refs/`), present only when the
 *    cache already holds it at start: vLLM downloads the model after the container starts its router.
 * A custom engine command names no model the container knows, so it needs the variable.
 */
export type TokenizerLookup =
  | { readonly kind: 'configured' }
  | { readonly kind: 'found'; readonly path: string }
  | { readonly kind: 'missing'; readonly problem: string };

export interface TokenizerFiles {
  readonly exists: (path: string) => boolean;
  /** A file's text, or undefined when it cannot be read. */
  readonly read: (path: string) => string | undefined;
}

const LOCAL_FILES: TokenizerFiles = {
  exists: existsSync,
  read: (path) => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return undefined;
    }
  },
};

type Env = Readonly<Record<string, string | undefined>>;

/** The Hugging Face hub cache directory, as huggingface_hub resolves it. */
export function huggingFaceHubCache(env: Env): string {
  const hub = (env.HF_HUB_CACHE ?? '').trim();
  if (hub !== '') return hub;
  const home = (env.HF_HOME ?? '').trim();
  return join(home !== '' ? home : join(env.HOME ?? homedir(), '.cache', 'huggingface'), 'hub');
}

/** Where a Hugging Face model's tokenizer.json lies in the hub cache, or undefined when its revision is not there. */
function cachedTokenizerPath(env: Env, modelId: string, files: TokenizerFiles): string | undefined {
  const repo = join(huggingFaceHubCache(env), `models--${modelId.split('/').join('--')}`);
  const revision = (env.SM_VLLM_REVISION ?? '').trim() || 'main';
  const commit = files.read(join(repo, 'refs', revision))?.trim() ?? revision;
  const path = join(repo, 'snapshots', commit, 'tokenizer.json');
  return files.exists(path) ? path : undefined;
}

/** Finds the tokenizer for KV events, or says why there is none (naming where it looked and what to set). */
export function findModelTokenizer(
  env: Env,
  engineCommand: string | undefined,
  dlcFiles: DlcFiles,
  files: TokenizerFiles = LOCAL_FILES,
): TokenizerLookup {
  const V = CONTAINER_ENV;
  if ((env[V.tokenizer] ?? '').trim() !== '') return { kind: 'configured' };
  const fix = `put the model (with its tokenizer.json) in /opt/ml/model, or set ${V.tokenizer} to its tokenizer.json`;
  if (engineCommand !== undefined)
    return {
      kind: 'missing',
      problem: `${V.engineKvEvents}=on with ${V.engineCommand} needs ${V.tokenizer}: the engine's tokenizer.json, or emulator for prefix-router emulate engines (got nothing)`,
    };
  const model = resolveModel(env, dlcFiles);
  if (model === undefined) return { kind: 'configured' }; // the missing model is its own problem
  const local = model.model.startsWith('/') ? join(model.model, 'tokenizer.json') : undefined;
  const path = local ?? cachedTokenizerPath(env, model.model, files);
  if (path !== undefined && files.exists(path)) return { kind: 'found', path };
  const looked =
    local ??
    `the Hugging Face cache ${huggingFaceHubCache(env)} (model ${model.model}, not downloaded yet: vLLM downloads it after the router starts)`;
  return {
    kind: 'missing',
    problem: `${V.engineKvEvents}=on needs the model's tokenizer.json to tokenize requests as the engine does: none in ${looked}; ${fix}`,
  };
}
