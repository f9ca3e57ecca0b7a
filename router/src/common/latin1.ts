/** A code unit outside Latin-1. */
// eslint-disable-next-line no-control-regex -- the range starts at U+0000 on purpose: every Latin-1 code unit
const BEYOND_LATIN1 = /[^\u0000-\u00ff]/;

/**
 * Whether every code unit of `text` is Latin-1 (one byte each, no surrogates). V8 answers in constant time for
 * its one-byte strings, the usual prompt; a two-byte string is scanned up to its first wider character.
 */
export function isLatin1(text: string): boolean {
  return !BEYOND_LATIN1.test(text);
}
