/**
 * What the emulated model "generates": deterministic filler, one 4-character word per token, so that
 * tokenCount(outputText(n)) === n and the same request always gets the same answer. Because the text is
 * deterministic, a multi-turn client that sends the answer back in its next turn reuses the blocks the engine
 * cached for it, as a real engine would.
 */
const WORDS: readonly string[] = [
  'the ', 'and ', 'for ', 'you ', 'can ', 'see ', 'all ', 'new ',
  'way ', 'our ', 'now ', 'one ', 'use ', 'any ', 'how ', 'its ',
];

/** The word generated as token number `index` (0-based). */
export function outputToken(index: number): string {
  return WORDS[index % WORDS.length];
}

/** Text of output tokens [from, to). */
export function outputText(to: number, from = 0): string {
  let text = '';
  for (let i = from; i < to; i++) text += WORDS[i % WORDS.length];
  return text;
}
