import fc from 'fast-check';
import { parseDecimalInteger, parseDecimalNumber } from '../../../router/src/common/decimal-text';

/** The one number rule for user text: plain decimal only, whatever Number() would also accept. */
describe('when user text is read as a decimal integer', () => {
  test.each([
    ['16', 16],
    [' 16 ', 16],
    ['+3', 3],
    ['-1', -1],
    ['0', 0],
    ['007', 7],
    ['9007199254740991', Number.MAX_SAFE_INTEGER],
  ])('GIVEN %p THEN it is %p', (text, value) => {
    expect(parseDecimalInteger(text)).toBe(value);
  });

  test.each([
    '0x10',
    '0o7',
    '0b1',
    '1e3',
    '1.0',
    '1.5',
    '',
    ' ',
    'Infinity',
    'NaN',
    '1_000',
    '1 000',
    '--1',
    '9007199254740992',
  ])('GIVEN %p (which Number() may read) THEN it is not a decimal integer', (text) => {
    expect(parseDecimalInteger(text)).toBeUndefined();
  });

  test('GIVEN any safe integer written in decimal THEN it reads back as itself', () => {
    fc.assert(fc.property(fc.maxSafeInteger(), (n) => expect(parseDecimalInteger(String(n))).toBe(n)));
  });
});

describe('when user text is read as a decimal number', () => {
  test.each([
    ['0.5', 0.5],
    ['.5', 0.5],
    ['5.', 5],
    ['1e3', 1000],
    ['-2.5E-1', -0.25],
    [' 42 ', 42],
  ])('GIVEN %p THEN it is %p', (text, value) => {
    expect(parseDecimalNumber(text)).toBe(value);
  });

  test.each(['0x10', 'Infinity', '-Infinity', 'NaN', '', '.', 'e3', '1e', '1e400', '1,5'])(
    'GIVEN %p THEN it is not a decimal number',
    (text) => {
      expect(parseDecimalNumber(text)).toBeUndefined();
    },
  );

  test('GIVEN any finite double written by String() THEN it reads back as itself', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) =>
        expect(parseDecimalNumber(String(x)) === x).toBe(true),
      ),
    );
    // (=== rather than toBe: String(-0) is "0", and the sign of zero is not text a user writes.)
  });
});
