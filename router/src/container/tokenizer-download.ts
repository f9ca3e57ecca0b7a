import { CONTAINER_ENV, CONTAINER_RANGES } from './container-env';
import {
  hubTokenizerPath,
  hubTokenizerWhere,
  LOCAL_FILES,
  type HubTokenizer,
  type TokenizerFiles,
} from './model-tokenizer';

/**
 * The wait for a tokenizer.json the engine downloads (model-tokenizer.ts `download`): vLLM fetches a Hugging Face
 * model's tokenizer files into the hub cache as it starts (vllm/tokenizers/registry.py, vllm-project/vllm@10cd9f0d:
 * the tokenizer is `ModelConfig.tokenizer`, the model unless --tokenizer says otherwise, at `tokenizer_revision`,
 * else the model's revision, vllm/config/model.py @18ec6629; loaded with transformers' `from_pretrained`, which
 * downloads through huggingface_hub into HF_HUB_CACHE; --download-dir is used for it only with ModelScope), so the
 * container starts the engines first and looks for the snapshot's file every `pollMs` until it appears, the time is
 * up, an engine gives up (fail fast) or the container is told to stop.
 */
export type TokenizerWaitOutcome =
  | { readonly kind: 'found'; readonly path: string; readonly afterMs: number }
  | { readonly kind: 'timeout'; readonly problem: string }
  | { readonly kind: 'gave-up'; readonly reason: string }
  | { readonly kind: 'stopped' };

export interface TokenizerWait {
  readonly hub: HubTokenizer;
  /** PREFIX_ROUTER_TOKENIZER_WAIT_MS. */
  readonly timeoutMs: number;
  /** How often the cache is looked at (a stat and a small read each time). */
  readonly pollMs: number;
  /** Resolves with a reason to stop waiting (an engine that never became healthy exited too often). */
  readonly giveUp: Promise<string>;
  /** Aborted when the container is told to stop (SIGTERM) while it waits. */
  readonly stop?: AbortSignal;
}

/** Polls until the tokenizer is in the cache or the wait ends; never rejects. */
export async function waitForDownloadedTokenizer(
  wait: TokenizerWait,
  files: TokenizerFiles = LOCAL_FILES,
  now: () => number = Date.now,
): Promise<TokenizerWaitOutcome> {
  const started = now();
  let gaveUp: string | undefined;
  /** Ends the current pause early: set while one runs. */
  let wake: (() => void) | undefined;
  void wait.giveUp.then((reason) => {
    gaveUp = reason;
    wake?.();
  });
  const onStop = (): void => wake?.();
  wait.stop?.addEventListener('abort', onStop);
  try {
    for (;;) {
      const path = hubTokenizerPath(wait.hub, files);
      if (path !== undefined) return { kind: 'found', path, afterMs: now() - started };
      if (wait.stop?.aborted === true) return { kind: 'stopped' };
      if (gaveUp !== undefined) return { kind: 'gave-up', reason: gaveUp };
      const left = started + wait.timeoutMs - now();
      if (left <= 0) return { kind: 'timeout', problem: tokenizerTimeoutProblem(wait, files) };
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(wait.pollMs, left));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  } finally {
    wait.stop?.removeEventListener('abort', onStop);
  }
}

/** The timeout's message: where the container looked, and what to set. */
function tokenizerTimeoutProblem(wait: TokenizerWait, files: TokenizerFiles): string {
  const V = CONTAINER_ENV;
  const R = CONTAINER_RANGES.tokenizerWaitMs;
  return `${V.engineKvEvents}=on needs the model's tokenizer.json, and the engine had not downloaded it after ${V.tokenizerWaitMs}=${wait.timeoutMs} ms: none at ${hubTokenizerWhere(wait.hub, files)} (a model without a tokenizer.json never gets one); set ${V.tokenizer} to its tokenizer.json, or raise ${V.tokenizerWaitMs} (${R.min}-${R.max})`;
}
