import { openAiPath, sharedSystemWorkload, type WorkloadRequest } from '../../../router/src/workload';

function texts(r: WorkloadRequest): { system: string; question: string } {
  if (r.kind !== 'chat') throw new Error('expected a chat request');
  return { system: r.messages[0].content, question: r.messages[1].content };
}

describe('when generating the shared-system workload', () => {
  test('GIVEN SGLang’s defaults THEN 64 groups × 16 prompts of 2,048 + 128 tokens with 256 output tokens, each group exactly 16 times', () => {
    const workload = sharedSystemWorkload();
    expect(workload.parameters).toMatchObject({
      groups: 64,
      promptsPerGroup: 16,
      systemTokens: 2048,
      questionTokens: 128,
      outputTokens: 256,
      order: 'shuffled',
    });
    expect(workload.expectedRequests).toBe(1024);
    expect(workload.expectedRequestsExact).toBe(true);
    const requests = Array.from(workload.requests());
    expect(requests).toHaveLength(1024);
    const perGroup = new Map<number, Set<string>>();
    const systemOf = new Map<number, string>();
    for (const r of requests) {
      const { system, question } = texts(r);
      expect(system).toHaveLength(2048 * 4);
      expect(question).toHaveLength(128 * 4);
      expect(r.maxTokens).toBe(256);
      if (!systemOf.has(r.group!)) systemOf.set(r.group!, system);
      expect(system).toBe(systemOf.get(r.group!));
      perGroup.set(r.group!, (perGroup.get(r.group!) ?? new Set()).add(question));
    }
    expect(perGroup.size).toBe(64);
    for (const questions of perGroup.values()) expect(questions.size).toBe(16);
    expect(new Set(systemOf.values()).size).toBe(64);
  });

  test('GIVEN shuffled order THEN groups interleave; grouped order sends group by group', () => {
    const shuffled = Array.from(sharedSystemWorkload({ groups: 4, promptsPerGroup: 3 }).requests()).map((r) => r.group);
    const grouped = Array.from(
      sharedSystemWorkload({ groups: 4, promptsPerGroup: 3, order: 'grouped' }).requests(),
    ).map((r) => r.group);
    expect(grouped).toEqual([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]);
    expect([...shuffled].sort()).toEqual(grouped);
    expect(shuffled).not.toEqual(grouped);
  });

  test('GIVEN api=completion THEN the prompt is system prompt then question, sent to /v1/completions', () => {
    const [r] = Array.from(sharedSystemWorkload({ groups: 1, promptsPerGroup: 1, api: 'completion' }).requests());
    const [c] = Array.from(sharedSystemWorkload({ groups: 1, promptsPerGroup: 1 }).requests());
    expect(openAiPath(r)).toBe('/v1/completions');
    expect(openAiPath(c)).toBe('/v1/chat/completions');
    if (r.kind !== 'completion') throw new Error('expected completion');
    expect(r.prompt).toBe(texts(c).system + texts(c).question);
  });

  test('GIVEN more requests than the order array may hold THEN it is refused', () => {
    expect(() => sharedSystemWorkload({ groups: 100000, promptsPerGroup: 101 })).toThrow(
      'groups × promptsPerGroup must be at most 10000000 (got 10100000)',
    );
  });
});
