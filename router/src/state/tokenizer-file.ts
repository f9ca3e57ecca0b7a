import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Turns prompt text into the model's token ids. */
export interface PromptTokenizer {
  /** What the summary names as the token source. */
  readonly description: string;
  encode(text: string): ArrayLike<number>;
}

/** A token the tokenizer matches before anything else (an added token: `<|eot_id|>`, `<|begin_of_text|>`). */
export interface AddedTokenText {
  readonly content: string;
  /** True when it takes no whitespace from either side and may sit inside a word: the text around it tokenizes on its own. */
  readonly splitsCleanly: boolean;
}

/** A model's tokenizer as loaded from its files: what the engine tokenizes prompts with. */
export interface ModelTokenizer {
  readonly path: string;
  /** Token ids of `text`; with `addSpecialTokens`, as the tokenizer's post-processor frames it (Llama: BOS first). */
  encode(text: string, addSpecialTokens: boolean): number[];
  /** Its added tokens (special and not). */
  readonly addedTokens: readonly AddedTokenText[];
  /** `tokenizer_config.json` beside it (`chat_template`, `bos_token`, `eos_token`, …), or {} when there is none. */
  readonly config: Readonly<Record<string, unknown>>;
}

/**
 * A model's own tokenizer from its `tokenizer.json` (the Hugging Face format every model repository ships), run by
 * @huggingface/tokenizers (pure JavaScript: no native build, no download, works offline), with the
 * `tokenizer_config.json` beside it when there is one (added-token settings, the chat template). `flag` names the
 * option the path came from, for the error.
 */
export function loadModelTokenizer(path: string, flag = '--tokenizer'): ModelTokenizer {
  const json = readJson(path, flag, 'not a JSON tokenizer file');
  const configPath = join(dirname(path), 'tokenizer_config.json');
  const config = existsSync(configPath) ? readJson(configPath, flag, 'not a JSON tokenizer config') : {};
  // Loaded only when asked for: most imports and routers use the router's estimate.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded lazily and synchronously: most runs never tokenize
  const { Tokenizer } = require('@huggingface/tokenizers') as typeof import('@huggingface/tokenizers');
  let tokenizer: InstanceType<typeof Tokenizer>;
  try {
    tokenizer = new Tokenizer(json, config);
  } catch (error) {
    throw new Error(`${flag} ${path}: not a tokenizer the library can load (${(error as Error).message})`);
  }
  const addedTokens = [...tokenizer.get_added_tokens_decoder().values()].map((token) => ({
    content: token.content,
    splitsCleanly: !token.lstrip && !token.rstrip && !token.single_word,
  }));
  return {
    path,
    encode: (text, addSpecialTokens) => tokenizer.encode(text, { add_special_tokens: addSpecialTokens }).ids,
    addedTokens,
    config: config as Record<string, unknown>,
  };
}

/**
 * The tokenizer a trace counts prompt text with. Special tokens are not added: the trace counts the prompt text as
 * sent; the chat template's few tokens are the engine's.
 */
export function loadTokenizer(path: string): PromptTokenizer {
  const tokenizer = loadModelTokenizer(path);
  return { description: `tokenizer ${path}`, encode: (text) => tokenizer.encode(text, false) };
}

function readJson(path: string, flag: string, notJson: string): object {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`${flag} ${path}: cannot read it (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    const json: unknown = JSON.parse(text);
    if (typeof json === 'object' && json !== null) return json;
  } catch {
    // Reported below.
  }
  throw new Error(`${flag} ${path}: ${notJson}`);
}
