/**
 * Finds the engine's usage numbers in a response as it streams past, without parsing it: the last
 * `"prompt_tokens": N` and `"cached_tokens": N` (vLLM's `usage.prompt_tokens_details.cached_tokens`) seen in the
 * body, in a plain JSON body or in SSE events alike. A key split across two chunks is still found: the end of
 * each chunk is kept and searched together with the start of the next.
 */
const KEYS = [Buffer.from('"cached_tokens"'), Buffer.from('"prompt_tokens"')] as const;
const CARRY = 48;

export class UsageScanner {
  cachedTokens: number | undefined;
  promptTokens: number | undefined;
  private carry: Buffer | undefined;

  push(chunk: Buffer): void {
    if (this.carry !== undefined) {
      const joined = Buffer.concat([this.carry, chunk.subarray(0, CARRY)]);
      this.scan(joined, this.carry.length);
    }
    this.scan(chunk, Infinity);
    // The last CARRY bytes seen, across chunks however small they are.
    if (chunk.length >= CARRY) this.carry = Buffer.from(chunk.subarray(chunk.length - CARRY));
    else {
      const joined = this.carry === undefined ? chunk : Buffer.concat([this.carry, chunk]);
      this.carry = Buffer.from(joined.subarray(Math.max(0, joined.length - CARRY)));
    }
  }

  /** Reads every key of `buf` that starts before `startsBefore` (the carry: keys past it are in the chunk's own scan). */
  private scan(buf: Buffer, startsBefore: number): void {
    for (let k = 0; k < KEYS.length; k++) {
      const key = KEYS[k];
      let at = buf.indexOf(key);
      while (at >= 0) {
        const value = at < startsBefore ? readNumberAfterColon(buf, at + key.length) : undefined;
        if (value !== undefined) {
          if (k === 0) this.cachedTokens = value;
          else this.promptTokens = value;
        }
        at = buf.indexOf(key, at + key.length);
      }
    }
  }
}

function readNumberAfterColon(buf: Buffer, i: number): number | undefined {
  while (i < buf.length && buf[i] === 0x20) i++;
  if (buf[i] !== 0x3a) return undefined; // ':'
  i++;
  while (i < buf.length && buf[i] === 0x20) i++;
  let n = 0;
  let digits = 0;
  while (i < buf.length && buf[i] >= 0x30 && buf[i] <= 0x39) {
    n = n * 10 + (buf[i] - 0x30);
    digits++;
    i++;
  }
  // A number cut by the end of the buffer is read again, whole, from the joined carry + next chunk.
  return digits > 0 && i < buf.length ? n : undefined;
}
