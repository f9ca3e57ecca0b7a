import fc from 'fast-check';
import { SeededRng } from '../../../../router/src/common/seeded-rng';
import { blockHashes } from '../../../../router/src/state/block-hash';
import { labelledText, syntheticText, syntheticTokens, TextCache, traceBlockText } from '../../../../router/src/sim/workload/synthetic-text';

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
