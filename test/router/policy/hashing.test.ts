import fc from 'fast-check';
import { codePointPrefixEnd, hashBytes, hashTextPrefix, hashUtf16 } from '../../../router/src/policy/hashing';

// Any UTF-16 code unit, lone surrogates included, with pairs and ASCII made likely.
const unit = fc.oneof(
  fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
  fc.constantFrom('😀', '𝔸', 'a', 'b', '\ud800', '\udc00'),
);
const text = fc.string({ unit, maxLength: 60 });

describe('when text prefixes are hashed', () => {
  it('GIVEN any text and limit THEN the one-pass hash equals hashing up to the code-point prefix end', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 0, max: 70 }), fc.integer(), (t, max, seed) => {
        expect(hashTextPrefix(t, max, seed)).toBe(hashUtf16(t, codePointPrefixEnd(t, max), seed));
      }),
      { numRuns: 2000 },
    );
  });

  it('GIVEN Latin-1 text of any length and limit THEN the fast path gives the same hash as hashing code units', () => {
    const latin1 = fc.string({
      unit: fc.integer({ min: 0, max: 0xff }).map((c) => String.fromCharCode(c)),
      maxLength: 40_000,
    });
    fc.assert(
      fc.property(latin1, fc.integer({ min: 0, max: 41_000 }), fc.integer(), (t, max, seed) => {
        expect(hashTextPrefix(t, max, seed)).toBe(hashUtf16(t, Math.min(max, t.length), seed));
        // A character beyond Latin-1 after the limit leaves the prefix on the fast path; within it, not.
        expect(hashTextPrefix(`${t}€`, max, seed)).toBe(hashUtf16(`${t}€`, Math.min(max, t.length + 1), seed));
      }),
      { numRuns: 300 },
    );
  });

  it('GIVEN long Latin-1 prompts (beyond the scratch buffer) THEN the fast path still matches, odd lengths included', () => {
    const long = Array.from({ length: 100_001 }, (_, i) => String.fromCharCode(32 + ((i * 7919) % 224))).join('');
    for (const max of [1, 2, 8191, 8192, 16_385, 65_537, 100_001, 200_000]) {
      expect(hashTextPrefix(long, max, 3)).toBe(hashUtf16(long, Math.min(max, long.length), 3));
    }
  });

  it('GIVEN a surrogate pair straddling the limit THEN it counts as one character and stays whole', () => {
    expect(codePointPrefixEnd('a😀b', 2)).toBe(3);
    expect(codePointPrefixEnd('😀😀', 1)).toBe(2);
    expect(codePointPrefixEnd('\ud800x', 1)).toBe(1);
  });

  it('GIVEN bytes THEN only the first `length` bytes matter', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 40 }),
        fc.uint8Array({ maxLength: 10 }),
        fc.nat({ max: 40 }),
        (a, b, len) => {
          const l = Math.min(len, a.length);
          expect(hashBytes(Buffer.concat([a.subarray(0, l), b]), l, 1)).toBe(hashBytes(a, l, 1));
        },
      ),
    );
  });
});
