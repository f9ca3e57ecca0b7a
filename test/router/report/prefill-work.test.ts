import { prefillWorkByInstance, workShareOverCapacityShare, type RequestRecord } from '../../../router/src/report';

const record = (
  id: string,
  instance: string | null,
  promptTokens?: number,
  cachedPromptTokens?: number,
): RequestRecord => ({
  id,
  instance,
  sentAtMs: 0,
  ttftMs: 1,
  e2eMs: 2,
  ...(promptTokens !== undefined ? { promptTokens } : {}),
  ...(cachedPromptTokens !== undefined ? { cachedPromptTokens } : {}),
});

describe('when prefill work is counted per instance', () => {
  test('GIVEN answered requests THEN each instance sums prompt − cached tokens; requests without usage or instance add nothing', () => {
    const records = [
      record('1', 'a', 1000, 600),
      record('2', 'b', 500),
      record('3', 'a', 300, 0),
      record('4', null, 900, 0),
      record('5', 'b'),
      record('6', 'c', 100, 0),
    ];
    expect(prefillWorkByInstance(records, ['a', 'b'])).toEqual([700, 500]);
  });

  test('GIVEN work in proportion to capacity THEN every ratio is 1; twice its share THEN 2', () => {
    expect(workShareOverCapacityShare([300, 100], [3, 1])).toEqual([1, 1]);
    const [fast, slow] = workShareOverCapacityShare([200, 200], [3, 1]);
    expect(fast).toBeCloseTo(2 / 3, 12);
    expect(slow).toBeCloseTo(2, 12);
  });

  test('GIVEN lists of different lengths THEN it refuses them', () => {
    expect(() => workShareOverCapacityShare([1, 2], [1])).toThrow(/same instances/);
  });
});
