import { SeededRng, type Rng } from '../../common/seeded-rng';
import { CHARS_PER_TOKEN } from '../../state/block-hash';

/**
 * Deterministic plain-word text of an exact length. Workloads never read a dataset: every prompt is drawn
 * from a seeded generator, so the same seed gives byte-identical prompts on every machine, and lengths in
 * tokens are exact under the project's token model (1 token = 4 characters).
 *
 * The vocabulary is part of the output: changing it changes every generated prompt (and so every recorded
 * figure), so only ever append to it with care.
 */
const VOCABULARY: readonly string[] = [
  'a', 'i', 'an', 'as', 'at', 'be', 'by', 'do', 'go', 'if', 'in', 'is', 'it', 'no', 'of', 'on', 'or', 'so', 'to',
  'up', 'we', 'all', 'and', 'any', 'are', 'ask', 'big', 'but', 'can', 'day', 'for', 'get', 'has', 'her', 'his',
  'how', 'new', 'not', 'now', 'old', 'one', 'our', 'out', 'own', 'put', 'run', 'see', 'set', 'the', 'top', 'two',
  'use', 'way', 'who', 'why', 'yes', 'you', 'also', 'back', 'best', 'both', 'call', 'case', 'come', 'data', 'each',
  'even', 'fact', 'find', 'form', 'from', 'give', 'good', 'hand', 'have', 'help', 'here', 'high', 'hold', 'home',
  'idea', 'into', 'just', 'keep', 'kind', 'know', 'last', 'late', 'lead', 'less', 'life', 'like', 'line', 'list',
  'long', 'look', 'make', 'many', 'mean', 'more', 'most', 'move', 'much', 'must', 'name', 'near', 'need', 'next',
  'note', 'once', 'only', 'open', 'over', 'part', 'plan', 'real', 'rest', 'role', 'rule', 'same', 'seem', 'show',
  'side', 'some', 'step', 'such', 'take', 'task', 'team', 'tell', 'than', 'that', 'them', 'then', 'they', 'this',
  'time', 'turn', 'unit', 'very', 'want', 'well', 'what', 'when', 'with', 'word', 'work', 'year', 'your', 'about',
  'after', 'again', 'below', 'build', 'check', 'clear', 'close', 'could', 'early', 'every', 'field', 'first',
  'given', 'group', 'large', 'later', 'learn', 'level', 'light', 'local', 'major', 'might', 'model', 'never',
  'order', 'other', 'place', 'point', 'price', 'quite', 'reach', 'ready', 'right', 'round', 'shall', 'short',
  'since', 'small', 'sound', 'space', 'stage', 'start', 'state', 'still', 'study', 'table', 'thing', 'think',
  'three', 'under', 'until', 'usual', 'value', 'water', 'where', 'which', 'while', 'world', 'would', 'write',
  'account', 'answer', 'around', 'before', 'better', 'change', 'common', 'course', 'detail', 'during', 'effort',
  'enough', 'figure', 'follow', 'future', 'member', 'method', 'moment', 'number', 'office', 'people', 'period',
  'person', 'policy', 'public', 'reason', 'record', 'report', 'result', 'return', 'review', 'second', 'should',
  'simple', 'single', 'source', 'status', 'system', 'always', 'another', 'because', 'between', 'service',
  'company', 'control', 'current', 'example', 'general', 'history', 'however', 'include', 'machine', 'measure',
  'network', 'nothing', 'perhaps', 'process', 'product', 'program', 'project', 'provide', 'quality', 'request',
  'section', 'several', 'support', 'through', 'without', 'practice', 'question', 'response', 'schedule',
  'standard', 'strategy', 'customer', 'decision', 'document', 'evidence', 'exchange', 'function', 'industry',
  'interest', 'material', 'position', 'possible', 'previous', 'required', 'security', 'software', 'together',
  'analysis', 'capacity', 'complete', 'condition', 'different', 'important', 'knowledge', 'operation',
  'situation', 'structure', 'available', 'attention', 'community', 'direction', 'character', 'agreement',
  'procedure', 'resources', 'technical', 'yesterday', 'additional', 'particular', 'throughout', 'experience',
  'management', 'individual', 'production', 'especially', 'understand', 'conference', 'collection',
  'information', 'environment', 'development', 'performance', 'requirement', 'opportunity', 'application',
];

// Globals are looked up once: in vm contexts (Jest runs tests in one) each global access in a hot loop is slow.
const floor = Math.floor;
const min = Math.min;
const imul = Math.imul;

/** Vocabulary words by length, so a text can end on a whole word of exactly the remaining length. */
const WORDS_BY_LENGTH: readonly (readonly string[])[] = (() => {
  const byLength: string[][] = [];
  for (const w of VOCABULARY) (byLength[w.length] ??= []).push(w);
  return byLength;
})();

/** Longest remainder we finish with one exact-length word (every length 1..FILL_MAX has vocabulary words). */
const FILL_MAX = 11;

function capitalize(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/**
 * Each vocabulary word as it can appear in a text, by index: [lower/capitalized][plain/comma/period], each
 * with its trailing space, so generating a text costs one array slot per word and no string building.
 */
const WORD_FORMS: readonly (readonly string[])[] = [false, true].flatMap((capital) =>
  ['', ',', '.'].map((mark) => VOCABULARY.map((w) => `${capital ? capitalize(w) : w}${mark} `)),
);
const PLAIN = 0;
const COMMA = 1;
const PERIOD = 2;
const CAPITAL = 3;

/**
 * Exactly `chars` characters of plain words: sentences of 4–15 words, each word followed by one space, so the
 * text always ends with a space and two generated texts concatenate into readable text.
 */
export function syntheticText(rng: Rng, chars: number): string {
  if (!Number.isInteger(chars) || chars < 0) throw new RangeError(`chars must be a non-negative integer (got ${chars})`);
  // An array joined once gives a flat string; `+=` would build a rope of thousands of nodes that every reader
  // (hashing, parsing) must flatten, and that a text cache would keep alive.
  const parts: string[] = [];
  let remaining = chars;
  let sentenceLeft = 0;
  const words = VOCABULARY.length;
  while (remaining > FILL_MAX + 1) {
    // Draws in a fixed order (word, sentence length when one starts, comma when not ending): the output is
    // part of every recorded figure.
    const index = floor(rng.next() * words);
    let form = PLAIN;
    if (sentenceLeft === 0) {
      sentenceLeft = 4 + floor(rng.next() * 12);
      form = CAPITAL;
    }
    sentenceLeft--;
    if (sentenceLeft === 0) form += PERIOD;
    else if (rng.next() < 0.06) form += COMMA;
    const word = WORD_FORMS[form]![index]!;
    // Never overshoot: the loop condition leaves room for the longest word plus punctuation and space.
    if (word.length > remaining) break;
    parts.push(word);
    remaining -= word.length;
  }
  // Finish on whole words of exactly the remaining length ("… word " or a lone space).
  while (remaining > 0) {
    if (remaining === 1) {
      parts.push(' ');
      remaining = 0;
      break;
    }
    const length = min(remaining - 1, FILL_MAX);
    const choices = WORDS_BY_LENGTH[length]!;
    parts.push(choices[floor(rng.next() * choices.length)]!, ' ');
    remaining -= length + 1;
  }
  return parts.join('');
}

/** Exactly `tokens` tokens (tokens × 4 characters) of plain words. */
export function syntheticTokens(rng: Rng, tokens: number): string {
  return syntheticText(rng, tokens * CHARS_PER_TOKEN);
}

/** A 32-bit seed from a label, so `textFor('group/17')` needs no shared generator state. */
export function seedFromLabel(seed: number, label: string): number {
  let h = (seed ^ 0x9e3779b9) >>> 0;
  for (let i = 0; i < label.length; i++) h = imul(h ^ label.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h >>> 0;
}

/**
 * Text deterministic from (seed, label) alone: the same on every call, whatever else was generated before.
 * Workloads use it for shared pieces (a group's prefix, a system prompt) that many requests repeat.
 */
export function labelledText(seed: number, label: string, chars: number): string {
  return syntheticText(new SeededRng(seedFromLabel(seed, label)), chars);
}

/**
 * The fixed text of a Mooncake trace block: deterministic from the block id alone (no run seed), so the same
 * id is the same text on every run and machine. It starts with `Section <id>: `, so two different ids differ
 * within their first few characters, and their first 16-token hash blocks never coincide.
 */
export function traceBlockText(id: number, blockTokens: number): string {
  if (!Number.isSafeInteger(id) || id < 0) throw new RangeError(`block id must be a non-negative safe integer (got ${id})`);
  const chars = blockTokens * CHARS_PER_TOKEN;
  const header = `Section ${id}: `;
  if (header.length > chars) throw new RangeError(`blockTokens ${blockTokens} is too small for block id ${id}`);
  const low = id % 0x100000000;
  const high = floor(id / 0x100000000);
  const seed = seedFromLabel(low ^ imul(high, 0x27d4eb2f), 'mooncake-block');
  return header + syntheticText(new SeededRng(seed), chars - header.length);
}

/**
 * A bounded cache of generated texts keyed by label, evicting least recently used entries once the total
 * length passes `maxChars`. Regenerating is deterministic, so eviction changes cost, never content.
 */
export class TextCache {
  private readonly entries = new Map<string | number, string>();
  private totalChars = 0;

  constructor(private readonly maxChars: number) {}

  get(key: string | number, make: () => string): string {
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    const text = make();
    this.entries.set(key, text);
    this.totalChars += text.length;
    while (this.totalChars > this.maxChars && this.entries.size > 1) {
      const [oldestKey, oldest] = this.entries.entries().next().value as [string | number, string];
      this.entries.delete(oldestKey);
      this.totalChars -= oldest.length;
    }
    return text;
  }

  get size(): number {
    return this.entries.size;
  }

  get chars(): number {
    return this.totalChars;
  }
}
