import { Template } from '@huggingface/jinja';
import { SizeBoundedLru } from '../common/size-bounded-lru';
import type { EngineChatMessage, EnginePrompt } from '../protocol/routing-request';
import type { ModelTokenizer } from '../state/tokenizer-file';
import { PromptBlocks } from './prompt-blocks';

/**
 * Says whether tokenizing further can matter: true while some engine's account holds every full block of the
 * tokens so far (past the first block it does not, no later block can be a hit: the prefix rule).
 */
export type WorthGoingOn = (soFar: PromptBlocks) => boolean;

/** A request's prompt as token ids, as the engine behind the router builds them. */
export interface RequestTokenizer {
  /** What it is, for logs and the start-up line: `tokenizer FILE` or `emulator`. */
  readonly description: string;
  /**
   * The prompt's token ids, or their leading part (PromptBlocks.complete false) when `worthGoingOn` said the rest
   * cannot matter; undefined when the router cannot reproduce them (a chat without a template).
   */
  promptBlocksOf(prompt: EnginePrompt, worthGoingOn?: WorthGoingOn): PromptBlocks | undefined;
}

/** Characters a text chunk has at least before it may end (memoized chunk by chunk). */
const CHUNK_CHARS = 512;
/** Token ids kept in the chunk memo: ~16 MiB of ids, the chunks' text about as much again. */
const MEMO_TOKENS = 1 << 21;

/**
 * A model's tokenizer applied as vLLM applies it: a chat request rendered with the model's chat template (as
 * `apply_chat_template(…, tokenize=False)`, add_generation_prompt as asked, the template's own BOS), then tokenized
 * without adding special tokens again unless the request asks (ChatCompletionRequest.add_special_tokens, default
 * false); a completion text tokenized with special tokens (CompletionRequest.add_special_tokens, default true); token
 * ids used as they are (vllm/entrypoints/openai/protocol.py, vllm-project/vllm@0052bed3).
 *
 * Tokenizing an 8k-token prompt takes tens of milliseconds in JavaScript, far more than a routing decision, so the
 * text is tokenized in pieces that tokenize on their own and each piece's ids are memoized: the text between added
 * tokens (the tokenizer splits those out first), and within it chunks of at least CHUNK_CHARS ending before a space
 * between two letters, when this tokenizer is checked at load to tokenize such a cut alike (byte-level BPE with a
 * GPT-style split does; a tokenizer that prepends a space marker to every piece does not, and is then memoized per
 * piece between added tokens only). A repeated prefix costs a lookup per chunk; a new piece is tokenized only while
 * `worthGoingOn` says an engine holds everything before it.
 */
export class ModelRequestTokenizer implements RequestTokenizer {
  readonly description: string;
  private readonly template: Template | undefined;
  private readonly templateTokens: Record<string, string>;
  private readonly addedTokenIds = new Map<string, number[]>();
  private readonly addedTokenPattern: RegExp | undefined;
  /** Ids the tokenizer puts before and after a text when adding special tokens (Llama: BOS; none after). */
  private readonly framing: { readonly before: number[]; readonly after: number[] };
  readonly cutsWithinText: boolean;
  private readonly memo = new SizeBoundedLru<string, readonly number[]>(MEMO_TOKENS, (ids) => ids.length + 1);

  constructor(private readonly tokenizer: ModelTokenizer) {
    this.description = `tokenizer ${tokenizer.path}`;
    const source = chatTemplateOf(tokenizer.config);
    this.template = source === undefined ? undefined : new Template(source);
    this.templateTokens = specialTokenTexts(tokenizer.config);
    const clean = tokenizer.addedTokens.filter((t) => t.splitsCleanly && t.content.length > 0);
    for (const t of clean) this.addedTokenIds.set(t.content, tokenizer.encode(t.content, false));
    this.addedTokenPattern =
      clean.length === 0
        ? undefined
        : new RegExp(
            clean
              .map((t) => t.content)
              .sort((a, b) => b.length - a.length)
              .map(escapeRegExp)
              .join('|'),
            'g',
          );
    this.framing = framingOf(tokenizer);
    this.cutsWithinText = cutsTokenizeAlike(tokenizer);
  }

  promptBlocksOf(prompt: EnginePrompt, worthGoingOn?: WorthGoingOn): PromptBlocks | undefined {
    if (prompt.kind === 'token-ids') return new PromptBlocks(prompt.ids, true);
    const text = prompt.kind === 'chat' ? this.render(prompt.messages, prompt.addGenerationPrompt) : prompt.text;
    if (text === undefined) return undefined;
    const ids: number[] = prompt.addSpecialTokens ? [...this.framing.before] : [];
    const complete = this.appendTokens(text, ids, worthGoingOn);
    if (complete && prompt.addSpecialTokens) ids.push(...this.framing.after);
    return new PromptBlocks(ids, complete);
  }

  /** The chat rendered as vLLM renders it, or undefined when the model has no template or the template fails. */
  private render(messages: readonly EngineChatMessage[], addGenerationPrompt: boolean): string | undefined {
    if (this.template === undefined) return undefined;
    try {
      return this.template.render({
        ...this.templateTokens,
        // vLLM joins a message's text parts with newlines for a template that reads content as a string.
        messages: messages.map((m) => ({
          role: m.role,
          content: typeof m.content === 'string' ? m.content : m.content.join('\n'),
        })),
        add_generation_prompt: addGenerationPrompt,
      });
    } catch {
      return undefined;
    }
  }

  /** Appends the ids of `text`, piece by piece; false when it stopped early because nothing further can matter. */
  private appendTokens(text: string, ids: number[], worthGoingOn: WorthGoingOn | undefined): boolean {
    let from = 0;
    const pattern = this.addedTokenPattern;
    if (pattern !== undefined) {
      pattern.lastIndex = 0;
      for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
        if (!this.appendText(text, from, m.index, ids, worthGoingOn)) return false;
        ids.push(...this.addedTokenIds.get(m[0])!);
        from = m.index + m[0].length;
      }
    }
    return this.appendText(text, from, text.length, ids, worthGoingOn);
  }

  /** Appends the ids of `text[from, to)` (no added tokens in it), chunk by chunk. */
  private appendText(
    text: string,
    from: number,
    to: number,
    ids: number[],
    worthGoingOn: WorthGoingOn | undefined,
  ): boolean {
    while (from < to) {
      const end = this.cutsWithinText ? chunkEnd(text, from, to) : to;
      const chunk = text.slice(from, end);
      let chunkIds = this.memo.get(chunk);
      if (chunkIds === undefined) {
        if (worthGoingOn !== undefined && !worthGoingOn(new PromptBlocks(ids, false))) return false;
        chunkIds = this.tokenizer.encode(chunk, false);
        // A copy, so the memo does not keep the whole prompt alive through a sliced string.
        this.memo.set(Buffer.from(chunk, 'utf16le').toString('utf16le'), chunkIds);
      }
      for (let i = 0; i < chunkIds.length; i++) ids.push(chunkIds[i]);
      from = end;
    }
    return true;
  }
}

function isAsciiLetter(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

/** Where the chunk starting at `from` ends: before the first space between two letters CHUNK_CHARS on, else `to`. */
function chunkEnd(text: string, from: number, to: number): number {
  for (let p = from + CHUNK_CHARS; p < to - 1; p++) {
    if (text.charCodeAt(p) === 32 && isAsciiLetter(text.charCodeAt(p - 1)) && isAsciiLetter(text.charCodeAt(p + 1)))
      return p;
  }
  return to;
}

/** Text that exercises a tokenizer's splitting: words, numbers, punctuation, runs of spaces, newlines, non-ASCII. */
const CUT_CHECK_TEXT =
  'The quick brown fox, 12345 jumps over the lazy dog.  Two  spaces and\ttabs\nnew lines\n\n  indented code: ' +
  'const x = f(a, b); // comment Über café naïve résumé 東京 日本語 テキスト emoji 🙂 ok? Yes! it\'s "quoted" ' +
  "don't we'll they're I've http://example.com/path?q=1 snake_case CamelCase ALLCAPS end";

/**
 * True when cutting before a space between two letters tokenizes alike: every such cut in CUT_CHECK_TEXT gives the
 * same ids as the whole text. A tokenizer that fails keeps its memo per piece between added tokens.
 */
function cutsTokenizeAlike(tokenizer: ModelTokenizer): boolean {
  const whole = tokenizer.encode(CUT_CHECK_TEXT, false).join(',');
  for (let p = 1; p < CUT_CHECK_TEXT.length - 1; p++) {
    const c = CUT_CHECK_TEXT;
    if (c.charCodeAt(p) !== 32 || !isAsciiLetter(c.charCodeAt(p - 1)) || !isAsciiLetter(c.charCodeAt(p + 1))) continue;
    const parts = [...tokenizer.encode(c.slice(0, p), false), ...tokenizer.encode(c.slice(p), false)];
    if (parts.join(',') !== whole) return false;
  }
  return true;
}

/** The ids the tokenizer adds around a text when asked to add special tokens. */
function framingOf(tokenizer: ModelTokenizer): { before: number[]; after: number[] } {
  const bare = tokenizer.encode('hello', false);
  const framed = tokenizer.encode('hello', true);
  for (let at = 0; at + bare.length <= framed.length; at++) {
    if (bare.every((id, i) => framed[at + i] === id))
      return { before: framed.slice(0, at), after: framed.slice(at + bare.length) };
  }
  return { before: [], after: [] };
}

/** The model's chat template: `chat_template` as a string, or the one named "default" in a list of named templates. */
function chatTemplateOf(config: Readonly<Record<string, unknown>>): string | undefined {
  const template = config.chat_template;
  if (typeof template === 'string') return template;
  if (Array.isArray(template)) {
    const named = template.find((t: unknown) => (t as { name?: unknown }).name === 'default') as
      { template?: unknown } | undefined;
    if (typeof named?.template === 'string') return named.template;
  }
  return undefined;
}

/** bos_token, eos_token, … as the template reads them (a string, or an added-token object's content). */
function specialTokenTexts(config: Readonly<Record<string, unknown>>): Record<string, string> {
  const texts: Record<string, string> = {};
  for (const name of ['bos_token', 'eos_token', 'unk_token', 'pad_token']) {
    const value = config[name];
    if (typeof value === 'string') texts[name] = value;
    else if (typeof (value as { content?: unknown } | null)?.content === 'string')
      texts[name] = (value as { content: string }).content;
  }
  return texts;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
