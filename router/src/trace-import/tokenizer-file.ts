import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Turns prompt text into the model's token ids. */
export interface PromptTokenizer {
  /** What the summary names as the token source. */
  readonly description: string;
  encode(text: string): ArrayLike<number>;
}

/**
 * A model's own tokenizer from its `tokenizer.json` (the Hugging Face format every model repository ships), run by
 * @huggingface/tokenizers (pure JavaScript: no native build, no download, works offline). A
 * `tokenizer_config.json` beside it is read too (added-token and normalization settings). Special tokens are not
 * added: the trace counts the prompt text as sent; the chat template's few tokens are the engine's.
 */
export function loadTokenizer(path: string): PromptTokenizer {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(`--tokenizer ${path}: ${code ? `cannot read it (${code})` : 'not a JSON tokenizer file'}`);
  }
  const configPath = join(dirname(path), 'tokenizer_config.json');
  const config: unknown = existsSync(configPath) ? JSON.parse(readFileSync(configPath, 'utf8')) : {};
  // Loaded only when asked for: most imports use the router's estimate.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded lazily and synchronously: most imports never tokenize
  const { Tokenizer } = require('@huggingface/tokenizers') as typeof import('@huggingface/tokenizers');
  let tokenizer: InstanceType<typeof Tokenizer>;
  try {
    tokenizer = new Tokenizer(json as object, config as object);
  } catch (error) {
    throw new Error(`--tokenizer ${path}: not a tokenizer the library can load (${(error as Error).message})`);
  }
  return {
    description: `tokenizer ${path}`,
    encode: (text) => tokenizer.encode(text, { add_special_tokens: false }).ids,
  };
}
