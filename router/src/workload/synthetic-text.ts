import { SeededRng, type Rng } from '../common/seeded-rng';
import { SizeBoundedLru } from '../common/size-bounded-lru';
import { CHARS_PER_TOKEN } from '../state/block-hash';

/**
 * Deterministic plain-word text of an exact length. Workloads never read a dataset: every prompt is drawn
 * from a seeded generator, so the same seed gives byte-identical prompts on every machine, and lengths in
 * tokens are exact under the project's token model (1 token = 4 characters).
 *
 * The vocabulary is part of the output: changing it changes every generated prompt (and so every recorded
 * figure), so only ever append to it with care.
 */
const VOCABULARY: readonly string[] = [
  'a',
  'i',
  'an',
  'as',
  'at',
  'be',
  'by',
  'do',
  'go',
  'if',
  'in',
  'is',
  'it',
  'no',
  'of',
  'on',
  'or',
  'so',
  'to',
  'up',
  'we',
  'all',
  'and',
  'any',
  'are',
  'ask',
  'big',
  'but',
  'can',
  'day',
  'for',
  'get',
  'has',
  'her',
  'his',
  'how',
  'new',
  'not',
  'now',
  'old',
  'one',
  'our',
  'out',
  'own',
  'put',
  'run',
  'see',
  'set',
  'the',
  'top',
  'two',
  'use',
  'way',
  'who',
  'why',
  'yes',
  'you',
  'also',
  'back',
  'best',
  'both',
  'call',
  'case',
  'come',
  'data',
  'each',
  'even',
  'fact',
  'find',
  'form',
  'from',
  'give',
  'good',
  'hand',
  'have',
  'help',
  'here',
  'high',
  'hold',
  'home',
  'idea',
  'into',
  'just',
  'keep',
  'kind',
  'know',
  'last',
  'late',
  'lead',
  'less',
  'life',
  'like',
  'line',
  'list',
  'long',
  'look',
  'make',
  'many',
  'mean',
  'more',
  'most',
  'move',
  'much',
  'must',
  'name',
  'near',
  'need',
  'next',
  'note',
  'once',
  'only',
  'open',
  'over',
  'part',
  'plan',
  'real',
  'rest',
  'role',
  'rule',
  'same',
  'seem',
  'show',
  'side',
  'some',
  'step',
  'such',
  'take',
  'task',
  'team',
  'tell',
  'than',
  'that',
  'them',
  'then',
  'they',
  'this',
  'time',
  'turn',
  'unit',
  'very',
  'want',
  'well',
  'what',
  'when',
  'with',
  'word',
  'work',
  'year',
  'your',
  'about',
  'after',
  'again',
  'below',
  'build',
  'check',
  'clear',
  'close',
  'could',
  'early',
  'every',
  'field',
  'first',
  'given',
  'group',
  'large',
  'later',
  'learn',
  'level',
  'light',
  'local',
  'major',
  'might',
  'model',
  'never',
  'order',
  'other',
  'place',
  'point',
  'price',
  'quite',
  'reach',
  'ready',
  'right',
  'round',
  'shall',
  'short',
  'since',
  'small',
  'sound',
  'space',
  'stage',
  'start',
  'state',
  'still',
  'study',
  'table',
  'thing',
  'think',
  'three',
  'under',
  'until',
  'usual',
  'value',
  'water',
  'where',
  'which',
  'while',
  'world',
  'would',
  'write',
  'account',
  'answer',
  'around',
  'before',
  'better',
  'change',
  'common',
  'course',
  'detail',
  'during',
  'effort',
  'enough',
  'figure',
  'follow',
  'future',
  'member',
  'method',
  'moment',
  'number',
  'office',
  'people',
  'period',
  'person',
  'policy',
  'public',
  'reason',
  'record',
  'report',
  'result',
  'return',
  'review',
  'second',
  'should',
  'simple',
  'single',
  'source',
  'status',
  'system',
  'always',
  'another',
  'because',
  'between',
  'service',
  'company',
  'control',
  'current',
  'example',
  'general',
  'history',
  'however',
  'include',
  'machine',
  'measure',
  'network',
  'nothing',
  'perhaps',
  'process',
  'product',
  'program',
  'project',
  'provide',
  'quality',
  'request',
  'section',
  'several',
  'support',
  'through',
  'without',
  'practice',
  'question',
  'response',
  'schedule',
  'standard',
  'strategy',
  'customer',
  'decision',
  'document',
  'evidence',
  'exchange',
  'function',
  'industry',
  'interest',
  'material',
  'position',
  'possible',
  'previous',
  'required',
  'security',
  'software',
  'together',
  'analysis',
  'capacity',
  'complete',
  'condition',
  'different',
  'important',
  'knowledge',
  'operation',
  'situation',
  'structure',
  'available',
  'attention',
  'community',
  'direction',
  'character',
  'agreement',
  'procedure',
  'resources',
  'technical',
  'yesterday',
  'additional',
  'particular',
  'throughout',
  'experience',
  'management',
  'individual',
  'production',
  'especially',
  'understand',
  'conference',
  'collection',
  'information',
  'environment',
  'development',
  'performance',
  'requirement',
  'opportunity',
  'application',
];

// Globals are looked up once: in vm contexts (Jest runs tests in one) each global access in a hot loop is slow.
const floor = Math.floor;
const min = Math.min;
const imul = Math.imul;

function capitalize(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/**
 * Each vocabulary word as it can appear in a text, by index: [lower/capitalized][plain/comma/period], each
 * with its trailing space.
 */
const WORD_FORMS: readonly (readonly string[])[] = [false, true].flatMap((capital) =>
  ['', ',', '.'].map((mark) => VOCABULARY.map((w) => `${capital ? capitalize(w) : w}${mark} `)),
);
const PLAIN = 0;
const COMMA = 1;
const PERIOD = 2;
const CAPITAL = 3;

/**
 * Every piece a text is made of, numbered: the six forms of each word (piece form × words + word), then each
 * bare word (to end a text on an exact length), then a lone space. A text is a run of piece numbers; it
 * becomes a string by copying the pieces' bytes, with no string building.
 */
const WORDS = VOCABULARY.length;
const PIECES: readonly string[] = [...WORD_FORMS.flat(), ...VOCABULARY, ' '];
const BARE_WORD = WORD_FORMS.length * WORDS;
const LONE_SPACE = PIECES.length - 1;
const PIECE_LENGTH = Uint8Array.from(PIECES, (piece) => piece.length);
/**
 * Each piece's bytes in a 16-byte slot, as four little-endian 32-bit words: a piece is copied a word at a
 * time, the last word's spare bytes overwritten by the next piece (≈ 4× faster than byte by byte).
 */
const SLOT_WORDS = 4;
const PIECE_WORDS: Int32Array = (() => {
  const words = new Int32Array(PIECES.length * SLOT_WORDS);
  const bytes = new DataView(words.buffer);
  PIECES.forEach((piece, i) => {
    if (piece.length > SLOT_WORDS * 4) throw new Error(`piece "${piece}" does not fit its slot`);
    for (let c = 0; c < piece.length; c++) bytes.setUint8(i * SLOT_WORDS * 4 + c, piece.charCodeAt(c));
  });
  // The copy writes the words little-endian, so they hold the bytes read little-endian on any machine.
  for (let w = 0; w < words.length; w++) words[w] = bytes.getInt32(w * 4, true);
  return words;
})();

/** Vocabulary indexes by word length, so a text can end on a whole word of exactly the remaining length. */
const WORD_INDEXES_BY_LENGTH: readonly (readonly number[])[] = (() => {
  const byLength: number[][] = [];
  VOCABULARY.forEach((w, i) => (byLength[w.length] ??= []).push(i));
  return byLength;
})();

/** Longest remainder we finish with one exact-length word (every length 1..FILL_MAX has vocabulary words). */
const FILL_MAX = 11;

/**
 * A generated text as piece numbers: ≈ 0.3 bytes a character instead of 1, and turned back into its string
 * (`textOfPieces`) several times faster than generating it again.
 */
export interface SyntheticPieces {
  readonly pieces: Uint16Array;
  readonly chars: number;
}

// Scratch space reused by every call (texts are built one at a time on a thread).
let scratchPieces = new Uint16Array(4096);
let scratchBytes = new DataView(new ArrayBuffer(16384));
let scratchBuffer = Buffer.from(scratchBytes.buffer);

/** The pieces of exactly `chars` characters of plain words, in `scratchPieces`; returns how many. */
function drawPieces(rng: Rng, chars: number): number {
  if (!Number.isInteger(chars) || chars < 0)
    throw new RangeError(`chars must be a non-negative integer (got ${chars})`);
  // Every piece has at least one character, so this many slots always suffice.
  if (scratchPieces.length < chars) scratchPieces = new Uint16Array(chars);
  const out = scratchPieces;
  let n = 0;
  let remaining = chars;
  let sentenceLeft = 0;
  while (remaining > FILL_MAX + 1) {
    // Draws in a fixed order (word, sentence length when one starts, comma when not ending): the output is
    // part of every recorded figure.
    const index = floor(rng.next() * WORDS);
    let form = PLAIN;
    if (sentenceLeft === 0) {
      sentenceLeft = 4 + floor(rng.next() * 12);
      form = CAPITAL;
    }
    sentenceLeft--;
    if (sentenceLeft === 0) form += PERIOD;
    else if (rng.next() < 0.06) form += COMMA;
    const piece = form * WORDS + index;
    const length = PIECE_LENGTH[piece];
    // Never overshoot: the loop condition leaves room for the longest word plus punctuation and space.
    if (length > remaining) break;
    out[n++] = piece;
    remaining -= length;
  }
  // Finish on whole words of exactly the remaining length ("… word " or a lone space).
  while (remaining > 0) {
    if (remaining === 1) {
      out[n++] = LONE_SPACE;
      break;
    }
    const length = min(remaining - 1, FILL_MAX);
    const choices = WORD_INDEXES_BY_LENGTH[length];
    out[n++] = BARE_WORD + choices[floor(rng.next() * choices.length)];
    out[n++] = LONE_SPACE;
    remaining -= length + 1;
  }
  return n;
}

/** The string of `count` pieces totalling `chars` characters: their bytes copied, decoded once as Latin-1. */
function piecesToText(pieces: Uint16Array, count: number, chars: number): string {
  // Room for the last piece's whole slot.
  if (scratchBytes.byteLength < chars + SLOT_WORDS * 4) {
    scratchBytes = new DataView(new ArrayBuffer(chars + SLOT_WORDS * 4));
    scratchBuffer = Buffer.from(scratchBytes.buffer);
  }
  const bytes = scratchBytes;
  let at = 0;
  for (let i = 0; i < count; i++) {
    const piece = pieces[i];
    const length = PIECE_LENGTH[piece];
    for (let b = 0, w = piece * SLOT_WORDS; b < length; b += 4, w++) bytes.setInt32(at + b, PIECE_WORDS[w], true);
    at += length;
  }
  return scratchBuffer.toString('latin1', 0, at);
}

/**
 * Exactly `chars` characters of plain words: sentences of 4–15 words, each word followed by one space, so the
 * text always ends with a space and two generated texts concatenate into readable text.
 */
export function syntheticText(rng: Rng, chars: number): string {
  const count = drawPieces(rng, chars);
  return piecesToText(scratchPieces, count, chars);
}

/** The same text as `syntheticText(rng, chars)`, kept as piece numbers. */
export function syntheticPieces(rng: Rng, chars: number): SyntheticPieces {
  const count = drawPieces(rng, chars);
  return { pieces: scratchPieces.slice(0, count), chars };
}

export function textOfPieces(text: SyntheticPieces): string {
  return piecesToText(text.pieces, text.pieces.length, text.chars);
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
  if (!Number.isSafeInteger(id) || id < 0)
    throw new RangeError(`block id must be a non-negative safe integer (got ${id})`);
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
  private readonly texts: SizeBoundedLru<string | number, string>;

  constructor(maxChars: number) {
    this.texts = new SizeBoundedLru(maxChars, (text) => text.length);
  }

  get(key: string | number, make: () => string): string {
    let text = this.texts.get(key);
    if (text === undefined) {
      text = make();
      this.texts.set(key, text);
    }
    return text;
  }

  /** The text kept for `key` (now the most recently used), or undefined. */
  lookup(key: string | number): string | undefined {
    return this.texts.get(key);
  }

  keep(key: string | number, text: string): void {
    this.texts.set(key, text);
  }

  get size(): number {
    return this.texts.count;
  }

  get chars(): number {
    return this.texts.size;
  }
}

/** Piece numbers kept by a `LabelledTextCache` by default: 128 MB, the 7,000-token prefixes of ≈ 15,000 groups. */
export const DEFAULT_PIECE_CACHE_BYTES = 128 * 2 ** 20;

/**
 * Labelled texts that many requests repeat (a group's document, a system prompt), in two tiers: the most
 * recently used as strings, ready to use (up to `maxChars` characters), and up to `maxPieceBytes` of them as
 * piece numbers (≈ 0.3 bytes a character), from which a string is rebuilt about 3× faster than generated
 * again. A 112-instance long-context fleet repeats 8,800 prefixes of 28,000 characters: 246 MB as strings,
 * 76 MB as pieces. Texts are deterministic from (seed, label), so eviction changes cost, never content.
 *
 * A text rebuilt from pieces is not kept as a string again: it was rebuilt because the strings tier evicted it
 * before its next use, which an LRU does to every text once the texts in use outgrow it. Keeping it would only
 * evict another 28 KB string into the old generation, whose full collections then cost more than the rebuilds
 * (`npm run bench:prompts`, 112 instances: 20–22 µs of collections a request, 6–8 µs without keeping them).
 */
export class LabelledTextCache {
  private readonly strings: TextCache;
  private readonly pieces: SizeBoundedLru<string, SyntheticPieces>;

  constructor(
    private readonly seed: number,
    maxChars: number,
    maxPieceBytes = DEFAULT_PIECE_CACHE_BYTES,
  ) {
    this.strings = new TextCache(maxChars);
    this.pieces = new SizeBoundedLru(maxPieceBytes, (kept) => kept.pieces.byteLength);
  }

  /** `labelledText(seed, label, chars)`; a label must always be asked for with the same length. */
  get(label: string, chars: number): string {
    let text = this.strings.lookup(label);
    if (text === undefined) {
      const kept = this.pieces.get(label);
      if (kept !== undefined) {
        text = textOfPieces(kept);
      } else {
        const made = syntheticPieces(new SeededRng(seedFromLabel(this.seed, label)), chars);
        this.pieces.set(label, made);
        text = textOfPieces(made);
        this.strings.keep(label, text);
      }
    }
    if (text.length !== chars)
      throw new RangeError(`text "${label}" was cached with ${text.length} characters, asked for ${chars}`);
    return text;
  }

  /** Texts kept as strings / as pieces, and the pieces' bytes (for tests and diagnostics). */
  get size(): { readonly strings: number; readonly pieces: number; readonly pieceBytes: number } {
    return { strings: this.strings.size, pieces: this.pieces.count, pieceBytes: this.pieces.size };
  }
}
