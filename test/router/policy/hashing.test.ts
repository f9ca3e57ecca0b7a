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

  it('GIVEN a surrogate pair straddling the limit THEN it counts as one character and stays whole', () => {
    expect(codePointPrefixEnd('a😀b', 2)).toBe(3);
    expect(codePointPrefixEnd('😀😀', 1)).toBe(2);
    expect(codePointPrefixEnd('\ud800x', 1)).toBe(1);
  });

  it('GIVEN bytes THEN only the first `length` bytes matter', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), fc.uint8Array({ maxLength: 10 }), fc.nat({ max: 40 }), (a, b, len) => {
        const l = Math.min(len, a.length);
        expect(hashBytes(Buffer.concat([a.subarray(0, l), b]), l, 1)).toBe(hashBytes(a, l, 1));
      }),
    );
  });
});
