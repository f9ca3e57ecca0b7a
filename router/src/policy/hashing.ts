import { endianness } from 'node:os';
import { isLatin1 } from '../common/latin1';

/**
 * Fast non-cryptographic 32-bit hashing (MurmurHash3 x86_32 structure) for routing keys.
 *
 * Routing hashes up to 64 KiB per request and the simulator makes ~100k decisions per run, so these loops
 * work on the input in place, or on one reused scratch buffer: no allocation per call.
 */
// Globals are looked up once: inside vm contexts (Jest runs tests in one) every global access goes through an
// interceptor and costs ~0.5 µs, which would dominate these loops.
const imul = Math.imul;
const min = Math.min;

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

/** MurmurHash3's body step: mixes the 32-bit word `k` into `h`. */
function mixWord(h: number, k: number): number {
  k = imul(k, C1);
  k = (k << 15) | (k >>> 17);
  k = imul(k, C2);
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (imul(h, 5) + 0xe6546b64) | 0;
}

/** MurmurHash3's tail step: mixes the last, partial word `k` into `h`. */
function mixTail(h: number, k: number): number {
  k = imul(k, C1);
  k = (k << 15) | (k >>> 17);
  k = imul(k, C2);
  return h ^ k;
}

/** MurmurHash3's finalizer: full avalanche of a 32-bit value. Returns an unsigned 32-bit integer. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Hash of the first `length` bytes of `bytes` (clamped to its size). Unsigned 32-bit. */
export function hashBytes(bytes: Uint8Array, length: number, seed: number): number {
  const n = min(length, bytes.length);
  const blockEnd = n & ~3;
  let h = seed | 0;
  for (let i = 0; i < blockEnd; i += 4) {
    h = mixWord(h, bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24));
  }
  const rest = n - blockEnd;
  if (rest > 0) {
    let k = bytes[blockEnd];
    if (rest > 1) k |= bytes[blockEnd + 1] << 8;
    if (rest > 2) k |= bytes[blockEnd + 2] << 16;
    h = mixTail(h, k);
  }
  return fmix32(h ^ n);
}

/** Hash of the UTF-16 code units `text[0, end)`, two code units per 32-bit word. Unsigned 32-bit. */
export function hashUtf16(text: string, end: number, seed: number): number {
  return hashUtf16Range(text, 0, end, seed);
}

/** True where UTF-16LE bytes read as native 32-bit words are (c0 | c1 << 16), the words hashUtf16 mixes. */
const LITTLE_ENDIAN = endianness() === 'LE';
// Scratch for a prefix's UTF-16LE bytes, reused by every call (grown as needed).
let scratchBytes = Buffer.allocUnsafeSlow(16384);
let scratchWords = new Int32Array(scratchBytes.buffer);

/**
 * hashUtf16(text, codePointPrefixEnd(text, maxCharacters), seed) in one pass: the end is extended by one
 * code unit for every surrogate pair met on the way, so the text is read once. Latin-1 text (no surrogates)
 * takes a faster path: its prefix is written out as UTF-16LE in one native call and mixed a word at a time,
 * about twice as fast as reading it two code units at a time (bench:router's decision-time table).
 */
export function hashTextPrefix(text: string, maxCharacters: number, seed: number): number {
  const end = maxCharacters < text.length ? maxCharacters : text.length;
  if (LITTLE_ENDIAN && end > 0) {
    const prefix = end < text.length ? text.slice(0, end) : text;
    if (isLatin1(prefix)) return hashLatin1Prefix(prefix, seed);
  }
  return hashCodeUnitPrefix(text, maxCharacters, seed);
}

/** hashUtf16(prefix, prefix.length, seed) for a Latin-1 string, from its UTF-16LE bytes. */
function hashLatin1Prefix(prefix: string, seed: number): number {
  const n = prefix.length;
  if (scratchBytes.length < 2 * n) {
    // Whole 32-bit words, so the word view covers the buffer.
    scratchBytes = Buffer.allocUnsafeSlow((2 * n + 3) & ~3);
    scratchWords = new Int32Array(scratchBytes.buffer);
  }
  scratchBytes.write(prefix, 0, 'utf16le');
  const words = scratchWords;
  const wordCount = n >> 1;
  let h = seed | 0;
  for (let i = 0; i < wordCount; i++) h = mixWord(h, words[i]);
  if (n & 1) h = mixTail(h, prefix.charCodeAt(n - 1));
  return fmix32(h ^ (n * 2));
}

/** hashTextPrefix on any text, two code units at a time, surrogate pairs kept whole. */
function hashCodeUnitPrefix(text: string, maxCharacters: number, seed: number): number {
  const n = text.length;
  let end = maxCharacters < n ? maxCharacters : n;
  let h = seed | 0;
  let i = 0;
  for (; i + 1 < end; i += 2) {
    const c0 = text.charCodeAt(i);
    const c1 = text.charCodeAt(i + 1);
    if ((c0 & 0xf800) === 0xd800 || (c1 & 0xf800) === 0xd800) {
      if ((c0 & 0xfc00) === 0xd800 && (c1 & 0xfc00) === 0xdc00 && end < n) end++;
      if ((c1 & 0xfc00) === 0xd800 && i + 2 < n && (text.charCodeAt(i + 2) & 0xfc00) === 0xdc00 && end < n) end++;
    }
    h = mixWord(h, c0 | (c1 << 16));
  }
  if (i < end) {
    const c0 = text.charCodeAt(i);
    if ((c0 & 0xfc00) === 0xd800 && i + 1 < n && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00 && end < n) {
      // A pair straddling the limit is kept whole: one more full word.
      end++;
      h = mixWord(h, c0 | (text.charCodeAt(i + 1) << 16));
    } else {
      h = mixTail(h, c0);
    }
  }
  return fmix32(h ^ (end * 2));
}

/** Hash of a whole string. */
export function hashString(text: string, seed: number): number {
  return hashUtf16(text, text.length, seed);
}

/**
 * The UTF-16 index just past the first `maxCharacters` characters (Unicode code points) of `text`, so a
 * surrogate pair (an emoji, a rare CJK ideograph) counts as one character and is never split.
 */
export function codePointPrefixEnd(text: string, maxCharacters: number): number {
  const n = text.length;
  if (n <= maxCharacters) return n;
  let i = 0;
  let count = 0;
  while (count < maxCharacters && i < n) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        i += 2;
        count++;
        continue;
      }
    }
    i++;
    count++;
  }
  return i;
}

/** Hash of the UTF-16 code units `text[start, end)`, two per 32-bit word. Unsigned 32-bit. */
export function hashUtf16Range(text: string, start: number, end: number, seed: number): number {
  const n = min(end, text.length);
  let h = seed | 0;
  let i = start;
  for (; i + 1 < n; i += 2) {
    h = mixWord(h, text.charCodeAt(i) | (text.charCodeAt(i + 1) << 16));
  }
  if (i < n) h = mixTail(h, text.charCodeAt(i));
  return fmix32(h ^ ((n - start) * 2));
}
