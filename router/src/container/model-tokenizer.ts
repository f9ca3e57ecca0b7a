import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { CONTAINER_ENV } from './container-env';
import { resolveModel, type DlcFiles } from './engine-command';

/**
 * The tokenizer.json the router needs to read the engines' KV events (PREFIX_ROUTER_ENGINE_KV_EVENTS=on): requests
 * must be tokenized as the engine tokenizes them. Where it is found, in order:
 * 1. PREFIX_ROUTER_TOKENIZER, when set (a file, or `emulator`): the router checks it as `serve --tokenizer` does.
 * 2. The directory the default engine reads its tokenizer from (vLLM's --tokenizer, SM_VLLM_TOKENIZER, else the
 *    model: SM_VLLM_MODEL as an absolute path, else a non-empty /opt/ml/model, where SageMaker copies an S3 model
 *    before the container starts): `DIR/tokenizer.json`.
 * 3. A Hugging Face model id: the snapshot in the Hugging Face hub cache of its revision (vLLM's
 *    --tokenizer-revision, else --revision, else `main`). When the cache does not hold it yet, the engine downloads it
 *    as it starts (`download`): the container waits for it (tokenizer-download.ts) unless the hub is offline or
 *    PREFIX_ROUTER_TOKENIZER_WAIT_MS is 0.
 * A custom engine command names no model the container knows, so it needs the variable.
 */
export type TokenizerLookup =
  | { readonly kind: 'configured' }
  | { readonly kind: 'found'; readonly path: string }
  | { readonly kind: 'download'; readonly hub: HubTokenizer }
  | { readonly kind: 'missing'; readonly problem: string };

/**
 * A tokenizer.json in the Hugging Face hub cache, as huggingface_hub lays it out (file_download.py,
 * huggingface/huggingface_hub@f7c9b7df: `repo_folder_name`, `_cache_commit_hash_for_specific_revision`,
 * `_hf_hub_download_to_cache_dir`): `CACHE/models--ORG--NAME/refs/REVISION` holds the revision's commit and
 * `snapshots/COMMIT/tokenizer.json` links to the blob, made only once the blob is complete (it is downloaded to
 * `blobs/ETAG.incomplete` and renamed first), so a snapshot file that exists is a whole file.
 */
export interface HubTokenizer {
  /** The repository id the engine loads its tokenizer from (`org/name`). */
  readonly repoId: string;
  /** A branch, tag or commit. */
  readonly revision: string;
  /** The hub cache directory (huggingFaceHubCache). */
  readonly cacheDir: string;
}

export interface TokenizerFiles {
  readonly exists: (path: string) => boolean;
  /** A file's text, or undefined when it cannot be read. */
  readonly read: (path: string) => string | undefined;
}

export const LOCAL_FILES: TokenizerFiles = {
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

function variable(env: Env, name: string): string | undefined {
  const value = (env[name] ?? '').trim();
  return value === '' ? undefined : value;
}

/**
 * The Hugging Face hub cache directory, as huggingface_hub resolves it (constants.py,
 * huggingface/huggingface_hub@03333b68): HF_HUB_CACHE, else the legacy HUGGINGFACE_HUB_CACHE, else HF_HOME/hub, else
 * $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub.
 */
export function huggingFaceHubCache(env: Env): string {
  const hub = variable(env, 'HF_HUB_CACHE') ?? variable(env, 'HUGGINGFACE_HUB_CACHE');
  if (hub !== undefined) return hub;
  const home =
    variable(env, 'HF_HOME') ??
    join(variable(env, 'XDG_CACHE_HOME') ?? join(env.HOME ?? homedir(), '.cache'), 'huggingface');
  return join(home, 'hub');
}

/** huggingface_hub's HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE): 1, ON, YES or TRUE in any case; then nothing is downloaded. */
function hubOffline(env: Env): boolean {
  const raw = variable(env, 'HF_HUB_OFFLINE') ?? variable(env, 'TRANSFORMERS_OFFLINE') ?? '';
  return ['1', 'ON', 'YES', 'TRUE'].includes(raw.toUpperCase());
}

function hubRepoDir(hub: HubTokenizer): string {
  return join(hub.cacheDir, `models--${hub.repoId.split('/').join('--')}`);
}

/** The snapshot's commit: refs/REVISION's content, else the revision itself (a commit given as the revision). */
function snapshotCommit(hub: HubTokenizer, files: TokenizerFiles): string | undefined {
  const ref = files.read(join(hubRepoDir(hub), 'refs', hub.revision))?.trim();
  if (ref !== undefined && ref !== '') return ref;
  return /^[0-9a-f]{40}$/.test(hub.revision) ? hub.revision : undefined;
}

/** The tokenizer.json of the revision's snapshot when the cache holds it now, else undefined. */
export function hubTokenizerPath(hub: HubTokenizer, files: TokenizerFiles = LOCAL_FILES): string | undefined {
  const commit = snapshotCommit(hub, files);
  if (commit === undefined) return undefined;
  const path = join(hubRepoDir(hub), 'snapshots', commit, 'tokenizer.json');
  return files.exists(path) ? path : undefined;
}

/** Where hubTokenizerPath looks, for messages: the snapshot path, its commit read from refs/ or said to be missing. */
export function hubTokenizerWhere(hub: HubTokenizer, files: TokenizerFiles = LOCAL_FILES): string {
  const commit = snapshotCommit(hub, files) ?? `COMMIT, with refs/${hub.revision} not written yet`;
  return `${join(hubRepoDir(hub), 'snapshots', commit, 'tokenizer.json')} (model ${hub.repoId}, revision ${hub.revision})`;
}

/** Finds the tokenizer for KV events, or says why there is none (naming where it looked and what to set). */
export function findModelTokenizer(
  env: Env,
  engineCommand: string | undefined,
  dlcFiles: DlcFiles,
  /** PREFIX_ROUTER_TOKENIZER_WAIT_MS: 0 refuses a tokenizer the engine has yet to download. */
  downloadWaitMs: number,
  files: TokenizerFiles = LOCAL_FILES,
): TokenizerLookup {
  const V = CONTAINER_ENV;
  if (variable(env, V.tokenizer) !== undefined) return { kind: 'configured' };
  if (engineCommand !== undefined)
    return {
      kind: 'missing',
      problem: `${V.engineKvEvents}=on with ${V.engineCommand} needs ${V.tokenizer}: the engine's tokenizer.json, or emulator for prefix-router emulate engines (got nothing)`,
    };
  const model = resolveModel(env, dlcFiles);
  if (model === undefined) return { kind: 'configured' }; // the missing model is its own problem
  const source = variable(env, 'SM_VLLM_TOKENIZER') ?? model.model;
  const missing = (looked: string): TokenizerLookup => ({
    kind: 'missing',
    problem: `${V.engineKvEvents}=on needs the model's tokenizer.json to tokenize requests as the engine does: none in ${looked}; put the model (with its tokenizer.json) in /opt/ml/model, or set ${V.tokenizer} to its tokenizer.json`,
  });
  if (source.startsWith('/')) {
    const local = join(source, 'tokenizer.json');
    return files.exists(local) ? { kind: 'found', path: local } : missing(local);
  }
  const hub: HubTokenizer = {
    repoId: source,
    revision: variable(env, 'SM_VLLM_TOKENIZER_REVISION') ?? variable(env, 'SM_VLLM_REVISION') ?? 'main',
    cacheDir: huggingFaceHubCache(env),
  };
  const cached = hubTokenizerPath(hub, files);
  if (cached !== undefined) return { kind: 'found', path: cached };
  if (hubOffline(env))
    return missing(
      `the Hugging Face cache, ${hubTokenizerWhere(hub, files)}, and HF_HUB_OFFLINE stops the engine downloading it`,
    );
  if (downloadWaitMs === 0)
    return missing(
      `the Hugging Face cache at start, ${hubTokenizerWhere(hub, files)}, and ${V.tokenizerWaitMs}=0 does not wait for the engine to download it`,
    );
  return { kind: 'download', hub };
}
