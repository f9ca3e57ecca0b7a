import {
  shortChatWorkload,
  toOpenAiBody,
  type ChatWorkloadRequest,
  type WorkloadRequest,
} from '../../../router/src/workload';

function chat(r: WorkloadRequest): ChatWorkloadRequest {
  if (r.kind !== 'chat') throw new Error('expected a chat request');
  return r;
}

describe('when generating the short-chat workload', () => {
  const options = { rate: 6, duration: 60, turns: { min: 2, max: 5 }, thinkSeconds: 4 };
  const requests = Array.from(shortChatWorkload(options).requests()).map(chat);

  test('GIVEN a seed WHEN generated twice THEN the requests are identical', () => {
    expect(Array.from(shortChatWorkload(options).requests())).toEqual(requests);
  });

  test('GIVEN multi-turn conversations THEN turn k+1 repeats turn k’s messages, then the reply of turn k’s max_tokens, then a new user message', () => {
    const byConversation = new Map<string, ChatWorkloadRequest[]>();
    for (const r of requests)
      byConversation.set(r.conversationId!, [...(byConversation.get(r.conversationId!) ?? []), r]);
    let followUps = 0;
    for (const turns of byConversation.values()) {
      turns.forEach((r, k) => {
        expect(r.turn).toBe(k);
        expect(r.messages.map((m) => m.role)).toEqual([
          'system',
          ...Array.from({ length: k }, () => ['user', 'assistant']).flat(),
          'user',
        ]);
        if (k === 0) {
          expect(r.dependsOnId).toBeUndefined();
          return;
        }
        followUps++;
        const previous = turns[k - 1];
        expect(r.dependsOnId).toBe(previous.id);
        expect(r.messages.slice(0, previous.messages.length)).toEqual(previous.messages);
        const reply = r.messages[previous.messages.length];
        expect(reply.role).toBe('assistant');
        expect(reply.content).toHaveLength(previous.maxTokens * 4);
        expect(r.arrivalMs).toBeGreaterThanOrEqual(previous.arrivalMs);
      });
    }
    expect(byConversation.size).toBeGreaterThan(50);
    expect(followUps).toBeGreaterThan(100);
  });

  test('GIVEN conversations with one of a few system prompts THEN every system prompt is one of them, with its own length in range', () => {
    const systems = new Set(requests.map((r) => r.messages[0].content));
    expect(systems.size).toBeLessThanOrEqual(8);
    expect(systems.size).toBeGreaterThan(3);
    for (const s of systems) {
      expect(s.length / 4).toBeGreaterThanOrEqual(200);
      expect(s.length / 4).toBeLessThanOrEqual(600);
    }
  });

  test('GIVEN the yielded order THEN arrivals never decrease and ids follow the index', () => {
    for (let i = 1; i < requests.length; i++)
      expect(requests[i].arrivalMs).toBeGreaterThanOrEqual(requests[i - 1].arrivalMs);
    requests.forEach((r, i) => {
      expect(r.index).toBe(i);
      expect(r.id).toBe(`sc-${String(i).padStart(6, '0')}`);
    });
  });

  test('GIVEN a context limit THEN no prompt plus reply exceeds it, so long conversations end early', () => {
    const limited = Array.from(
      shortChatWorkload({ ...options, turns: { min: 20, max: 20 }, maxContextTokens: 2000 }).requests(),
    ).map(chat);
    for (const r of limited) {
      const tokens = r.messages.reduce((s, m) => s + m.content.length / 4, 0);
      expect(tokens + r.maxTokens).toBeLessThanOrEqual(2000);
    }
    expect(Math.max(...limited.map((r) => r.turn!))).toBeLessThan(19);
  });

  test('GIVEN a count THEN exactly that many requests come out', () => {
    expect(Array.from(shortChatWorkload({ ...options, count: 17 }).requests())).toHaveLength(17);
  });

  test('GIVEN a conversation id THEN the OpenAI body sends it as user', () => {
    expect(toOpenAiBody(requests[0], { model: 'm', stream: false, ignoreEos: false })).toEqual({
      model: 'm',
      messages: requests[0].messages,
      max_tokens: requests[0].maxTokens,
      stream: false,
      user: requests[0].conversationId,
    });
  });
});
