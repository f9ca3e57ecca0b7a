import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { SeededRng } from '../../../router/src/common/seeded-rng';
import { blockHashes } from '../../../router/src/state/block-hash';
import {
  LabelledTextCache,
  labelledText,
  syntheticPieces,
  syntheticText,
  syntheticTokens,
  textOfPieces,
  TextCache,
  traceBlockText,
} from '../../../router/src/workload/synthetic-text';

const PLAIN_WORDS = /^ ?([A-Za-z]+[.,]? +)*$/;

describe('when generating synthetic text', () => {
  test('GIVEN any length WHEN generated THEN it has exactly that many characters of plain words and spaces, ending in a space', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 0, max: 0xffffffff }), (chars, seed) => {
        const text = syntheticText(new SeededRng(seed), chars);
        expect(text).toHaveLength(chars);
        expect(text).toMatch(PLAIN_WORDS);
      }),
      { numRuns: 300 },
    );
  });

  test('GIVEN the same seed WHEN generated twice THEN the texts are identical; another seed gives another text', () => {
    expect(syntheticTokens(new SeededRng(7), 500)).toBe(syntheticTokens(new SeededRng(7), 500));
    expect(syntheticTokens(new SeededRng(7), 500)).not.toBe(syntheticTokens(new SeededRng(8), 500));
    expect(syntheticTokens(new SeededRng(7), 500)).toHaveLength(2000);
  });

  test('GIVEN a label WHEN text is made from (seed, label) THEN it does not depend on what was generated before', () => {
    const first = labelledText(1, 'group/3', 400);
    labelledText(1, 'group/4', 9999);
    expect(labelledText(1, 'group/3', 400)).toBe(first);
    expect(labelledText(1, 'group/3', 400)).not.toBe(labelledText(2, 'group/3', 400));
  });

  test('GIVEN a fixed seed THEN the text is the one every recorded figure was made with', () => {
    // Pinned before texts were built from piece numbers (the generator's output is part of every figure).
    const digest = (chars: number) =>
      createHash('sha256')
        .update(syntheticText(new SeededRng(42), chars))
        .digest('hex')
        .slice(0, 16);
    expect(syntheticText(new SeededRng(42), 60)).toBe('Water method point answer every software must local process ');
    expect([1, 13, 4000, 100000].map(digest)).toEqual([
      '36a9e7f1c95b82ff',
      '92fdbf3ce0c5cbb6',
      '1c6e50d0ea060ef6',
      'caa2ccfc0a9eca8a',
    ]);
  });

  test('GIVEN a text kept as piece numbers WHEN rebuilt THEN it is the generated text, in about a third of a byte a character', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 20000 }), fc.integer({ min: 0, max: 0xffffffff }), (chars, seed) => {
        const kept = syntheticPieces(new SeededRng(seed), chars);
        expect(textOfPieces(kept)).toBe(syntheticText(new SeededRng(seed), chars));
        if (chars >= 1000) expect(kept.pieces.byteLength).toBeLessThan(chars / 2);
      }),
      { numRuns: 200 },
    );
  });

  test('GIVEN a negative or fractional length THEN it is refused', () => {
    expect(() => syntheticText(new SeededRng(1), -1)).toThrow(/non-negative integer/);
    expect(() => syntheticText(new SeededRng(1), 2.5)).toThrow(/non-negative integer/);
  });
});

describe('when making Mooncake trace blocks', () => {
  test('GIVEN a block id WHEN its text is made twice THEN it is the same 2,048 characters, starting with the id', () => {
    const text = traceBlockText(43923, 512);
    expect(text).toHaveLength(2048);
    expect(text.startsWith('Section 43923: ')).toBe(true);
    expect(traceBlockText(43923, 512)).toBe(text);
    // Pinned: an id's text must never change between versions or machines (recorded figures rely on it).
    expect(text.slice(0, 80)).toBe('Section 43923: Several mean different a production an collection run and. Under ');
    expect(blockHashes(text).at(-1)).toBe(2997381134202253);
  });

  test('GIVEN two different ids WHEN their blocks are hashed THEN even their first 16-token blocks differ', () => {
    fc.assert(
      fc.property(fc.nat({ max: 2 ** 40 }), fc.nat({ max: 2 ** 40 }), (a, b) => {
        fc.pre(a !== b);
        const ha = blockHashes(traceBlockText(a, 512), { maxBlocks: 1 });
        const hb = blockHashes(traceBlockText(b, 512), { maxBlocks: 1 });
        expect(ha[0]).not.toBe(hb[0]);
      }),
      { numRuns: 200 },
    );
  });

  test('GIVEN the largest safe id THEN its block is still made; a negative id is refused', () => {
    expect(traceBlockText(Number.MAX_SAFE_INTEGER, 16)).toHaveLength(64);
    expect(() => traceBlockText(-1, 512)).toThrow(/non-negative safe integer/);
  });
});

describe('when caching generated texts', () => {
  test('GIVEN a character budget WHEN it is exceeded THEN the least recently used text is dropped and rebuilt on demand', () => {
    const cache = new TextCache(25);
    let builds = 0;
    const make = (s: string) => () => {
      builds++;
      return s;
    };
    cache.get('a', make('x'.repeat(10)));
    cache.get('b', make('y'.repeat(10)));
    cache.get('a', make('never'));
    cache.get('c', make('z'.repeat(10)));
    expect(builds).toBe(3);
    expect(cache.size).toBe(2);
    expect(cache.chars).toBe(20);
    expect(cache.get('a', make('x'.repeat(10)))).toBe('x'.repeat(10));
    expect(builds).toBe(3);
    cache.get('b', make('y'.repeat(10)));
    expect(builds).toBe(4);
  });
});

describe('when caching labelled texts as strings and as piece numbers', () => {
  test('GIVEN budgets smaller than the texts asked for WHEN labels are asked for in any order THEN each is its labelled text', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 0, max: 4000 }),
        fc.integer({ min: 0, max: 2000 }),
        (labels, maxChars, maxPieceBytes) => {
          const cache = new LabelledTextCache(5, maxChars, maxPieceBytes);
          for (const label of labels) {
            const chars = 100 + label * 37;
            expect(cache.get(`doc/${label}`, chars)).toBe(labelledText(5, `doc/${label}`, chars));
          }
          expect(cache.size.pieceBytes).toBeLessThanOrEqual(maxPieceBytes);
        },
      ),
      { numRuns: 100 },
    );
  });

  test('GIVEN a text evicted from the string tier WHEN asked for again THEN it is rebuilt from its pieces, not generated', () => {
    const cache = new LabelledTextCache(5, 1000, 1_000_000);
    cache.get('doc/a', 900);
    cache.get('doc/b', 900);
    expect(cache.size).toMatchObject({ strings: 1, pieces: 2 });
    const pieceBytes = cache.size.pieceBytes;
    expect(cache.get('doc/a', 900)).toBe(labelledText(5, 'doc/a', 900));
    expect(cache.size).toEqual({ strings: 1, pieces: 2, pieceBytes });
  });

  test('GIVEN a label asked for with another length THEN it is refused', () => {
    const cache = new LabelledTextCache(5, 1000);
    cache.get('doc/a', 300);
    expect(() => cache.get('doc/a', 301)).toThrow(/doc\/a.*300.*301/);
  });
});
