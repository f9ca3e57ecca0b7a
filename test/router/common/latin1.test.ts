import fc from 'fast-check';
import { isLatin1 } from '../../../router/src/common/latin1';

describe('isLatin1', () => {
  test('GIVEN any text THEN it says whether every code unit is at most 0xFF', () => {
    const unit = fc.oneof(
      fc.integer({ min: 0, max: 0xff }).map((c) => String.fromCharCode(c)),
      fc.integer({ min: 0x100, max: 0xffff }).map((c) => String.fromCharCode(c)),
      fc.constantFrom('😀', 'é', 'ÿ', '\u0100'),
    );
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 50 }), (text) => {
        expect(isLatin1(text)).toBe([...text].every((c) => c.charCodeAt(0) <= 0xff && c.length === 1));
      }),
      { numRuns: 500 },
    );
  });

  test('GIVEN the edges THEN they fall on the right side', () => {
    expect(isLatin1('')).toBe(true);
    expect(isLatin1('plain ASCII, café, ÿ')).toBe(true);
    expect(isLatin1('Ā')).toBe(false);
    expect(isLatin1('a😀')).toBe(false);
  });
});
