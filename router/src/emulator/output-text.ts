/**
 * What the emulated model "generates": deterministic filler, one 4-character word per token, so that
 * tokenCount(outputText(n)) === n and the same request always gets the same answer. Because the text is
 * deterministic, a multi-turn client that sends the answer back in its next turn reuses the blocks the engine
 * cached for it, as a real engine would.
 */
const WORDS: readonly string[] = [
  'the ',
  'and ',
  'for ',
  'you ',
  'can ',
  'see ',
  'all ',
  'new ',
  'way ',
  'our ',
  'now ',
  'one ',
  'use ',
  'any ',
  'how ',
  'its ',
];

/** The word generated as token number `index` (0-based). */
export function outputToken(index: number): string {
  return WORDS[index % WORDS.length];
}

const CYCLE = WORDS.join('');
/** The word cycle repeated, grown on demand; outputs are slices of it (no per-token concatenation). */
let repeated = CYCLE.repeat(64);

/** Text of output tokens [from, to). */
export function outputText(to: number, from = 0): string {
  if (to <= from) return '';
  const start = (from % WORDS.length) * 4;
  const length = (to - from) * 4;
  while (repeated.length < start + length) repeated += repeated;
  return repeated.slice(start, start + length);
}
