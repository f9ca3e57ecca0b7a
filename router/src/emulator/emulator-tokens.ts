/**
 * vLLM's /tokenize and /detokenize for the emulator, consistent with its token model (1 token = 4 characters of
 * the prompt text, the last one possibly shorter): tokenizing gives exactly the token count the engine charges.
 *
 * Token ids: a chunk of four ASCII characters packs into one id (7 bits each, ids below 2^28), the same on every
 * emulator instance; any other chunk gets an id from this instance's vocabulary (2^28 and up), bounded so a
 * client cannot grow memory without limit. Detokenizing an id this instance never issued is a 400.
 */
import { CHARS_PER_TOKEN } from '../state/block-hash';
import { badRequest } from './emulator-errors';

const ASCII_LIMIT = 1 << 28;
/** Non-ASCII chunks one instance remembers. */
export const VOCABULARY_LIMIT = 1 << 20;

export class EmulatorTokenizer {
  private readonly idsOfChunk = new Map<string, number>();
  private readonly chunks: string[] = [];

  tokenize(text: string): number[] {
    const ids: number[] = [];
    for (let i = 0; i < text.length; i += CHARS_PER_TOKEN) ids.push(this.idOf(text.slice(i, i + CHARS_PER_TOKEN)));
    return ids;
  }

  detokenize(ids: readonly unknown[]): string {
    let text = '';
    ids.forEach((id, i) => {
      if (typeof id !== 'number' || !Number.isInteger(id) || id < 0)
        throw badRequest(`tokens[${i}] must be a non-negative integer, got ${JSON.stringify(id)}`, 'tokens');
      if (id < ASCII_LIMIT) {
        for (let k = 0; k < CHARS_PER_TOKEN; k++) text += String.fromCharCode((id >> (7 * k)) & 0x7f);
        return;
      }
      const chunk = this.chunks[id - ASCII_LIMIT];
      if (chunk === undefined)
        throw badRequest(`tokens[${i}]: token id ${id} is not in this emulator's vocabulary`, 'tokens');
      text += chunk;
    });
    return text;
  }

  private idOf(chunk: string): number {
    const packed = packedTokenId(chunk);
    if (packed !== undefined) return packed;
    const known = this.idsOfChunk.get(chunk);
    if (known !== undefined) return known;
    if (this.chunks.length >= VOCABULARY_LIMIT)
      throw badRequest(`the emulator's vocabulary for non-ASCII text is full (${VOCABULARY_LIMIT} entries)`);
    const id = ASCII_LIMIT + this.chunks.length;
    this.chunks.push(chunk);
    this.idsOfChunk.set(chunk, id);
    return id;
  }
}

/**
 * The id every emulator gives a chunk of four ASCII characters (7 bits each), or undefined for any other chunk (its
 * id is the issuing instance's own). The router's emulator tokenizer (emulator-request-tokenizer.ts) follows it.
 */
export function packedTokenId(chunk: string): number | undefined {
  if (chunk.length !== CHARS_PER_TOKEN) return undefined;
  let id = 0;
  for (let k = 0; k < CHARS_PER_TOKEN; k++) {
    const code = chunk.charCodeAt(k);
    if (code < 1 || code > 0x7f) return undefined;
    id |= code << (7 * k);
  }
  return id;
}
