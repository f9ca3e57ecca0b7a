import { SeededRng } from '../../../router/src/common/seeded-rng';
import {
  GroupPicker,
  longContextWorkload,
  toOpenAiBody,
  type ChatWorkloadRequest,
  type WorkloadRequest,
} from '../../../router/src/workload';

function take(iterable: Iterable<WorkloadRequest>, n: number): WorkloadRequest[] {
  const out: WorkloadRequest[] = [];
  for (const r of iterable) {
    out.push(r);
    if (out.length === n) break;
  }
  return out;
}

function chat(r: WorkloadRequest): ChatWorkloadRequest {
  if (r.kind !== 'chat') throw new Error('expected a chat request');
  return r;
}

describe('when generating the long-context workload', () => {
  const small = {
    groups: 5,
    prefixTokens: 300,
    suffixTokens: { min: 40, max: 60 },
    outputTokens: { min: 8, max: 12 },
    count: 60,
  };

  test('GIVEN a seed WHEN generated twice THEN the requests are identical; another seed changes them', () => {
    const a = Array.from(longContextWorkload(small).requests());
    const b = Array.from(longContextWorkload(small).requests());
    const c = Array.from(longContextWorkload({ ...small, seed: 2 }).requests());
    expect(b).toEqual(a);
    expect(c.map((r) => chat(r).messages[1].content)).not.toEqual(a.map((r) => chat(r).messages[1].content));
  });

  test('GIVEN prefix and suffix sizes THEN every prompt has exactly the prefix and a suffix within its range', () => {
    for (const r of longContextWorkload(small).requests()) {
      const [system, user] = chat(r).messages;
      expect(system.role).toBe('system');
      expect(system.content).toHaveLength(300 * 4);
      expect(user.content.length % 4).toBe(0);
      expect(user.content.length / 4).toBeGreaterThanOrEqual(40);
      expect(user.content.length / 4).toBeLessThanOrEqual(60);
      expect(r.maxTokens).toBeGreaterThanOrEqual(8);
      expect(r.maxTokens).toBeLessThanOrEqual(12);
    }
  });

  test('GIVEN groups THEN requests of one group share exactly the prefix text and requests of different groups share none of it', () => {
    const requests = Array.from(longContextWorkload(small).requests());
    const prefixOf = new Map<number, string>();
    for (const r of requests) {
      const prefix = chat(r).messages[0].content;
      const known = prefixOf.get(r.group!);
      if (known === undefined) prefixOf.set(r.group!, prefix);
      else expect(prefix).toBe(known);
    }
    expect(prefixOf.size).toBe(5);
    const prefixes = Array.from(prefixOf.values());
    for (let i = 0; i < prefixes.length; i++)
      for (let j = i + 1; j < prefixes.length; j++) expect(prefixes[i].slice(0, 64)).not.toBe(prefixes[j].slice(0, 64));
    const suffixes = new Set(requests.map((r) => chat(r).messages[1].content));
    expect(suffixes.size).toBe(requests.length);
  });

  test('GIVEN a different rate THEN arrivals change but the content of every request stays the same', () => {
    const slow = Array.from(longContextWorkload({ ...small, rate: 1 }).requests());
    const fast = Array.from(longContextWorkload({ ...small, rate: 50 }).requests());
    expect(fast.map((r) => [r.group, r.maxTokens, chat(r).messages[1].content])).toEqual(
      slow.map((r) => [r.group, r.maxTokens, chat(r).messages[1].content]),
    );
    expect(fast[59].arrivalMs).toBeLessThan(slow[59].arrivalMs);
  });

  test('GIVEN a rate and a duration THEN arrivals increase, stay within the duration and average the rate', () => {
    const requests = Array.from(
      longContextWorkload({ ...small, count: undefined, rate: 20, duration: 100 }).requests(),
    );
    for (let i = 1; i < requests.length; i++) expect(requests[i].arrivalMs).toBeGreaterThan(requests[i - 1].arrivalMs);
    expect(requests[requests.length - 1].arrivalMs).toBeLessThan(100_000);
    // 2,000 expected; a Poisson count has standard deviation ≈ 45.
    expect(requests.length).toBeGreaterThan(1850);
    expect(requests.length).toBeLessThan(2150);
    expect(requests.map((r) => r.index)).toEqual(requests.map((_, i) => i));
    expect(new Set(requests.map((r) => r.id)).size).toBe(requests.length);
  });

  test('GIVEN the default options THEN prompts are about 8,000 tokens with a 7,000-token shared prefix, 550 groups, 6 req/s for an hour', () => {
    const workload = longContextWorkload();
    expect(workload.parameters).toMatchObject({
      groups: 550,
      prefixTokens: 7000,
      suffixTokens: '900..1100',
      rate: 6,
      duration: 3600,
    });
    expect(workload.expectedRequests).toBe(21600);
    const [first] = take(workload.requests(), 1);
    const chars = chat(first).messages.reduce((s, m) => s + m.content.length, 0);
    expect(chars / 4).toBeGreaterThanOrEqual(7900);
    expect(chars / 4).toBeLessThanOrEqual(8100);
  });

  test('GIVEN api=completion THEN the prompt is the prefix followed by the suffix', () => {
    const [c] = take(longContextWorkload({ ...small, api: 'completion' }).requests(), 1);
    const [m] = take(longContextWorkload(small).requests(), 1);
    expect(c.kind).toBe('completion');
    if (c.kind !== 'completion') return;
    expect(c.prompt).toBe(
      chat(m)
        .messages.map((x) => x.content)
        .join(''),
    );
  });

  test('GIVEN tenants THEN each group carries its tenant key and the OpenAI body sends it as prompt_cache_key', () => {
    const requests = take(longContextWorkload({ ...small, tenants: 2 }).requests(), 20);
    for (const r of requests) expect(r.tenantKey).toBe(`tenant-${r.group! % 2}`);
    const body = toOpenAiBody(requests[0], { model: 'm' });
    expect(body).toMatchObject({
      model: 'm',
      max_tokens: requests[0].maxTokens,
      stream: true,
      stream_options: { include_usage: true },
      ignore_eos: true,
      prompt_cache_key: requests[0].tenantKey,
    });
    expect(body.messages).toEqual(chat(requests[0]).messages);
  });

  test('GIVEN prefixTokens=0 THEN the chat request has only the user message', () => {
    const [r] = take(longContextWorkload({ ...small, prefixTokens: 0 }).requests(), 1);
    expect(chat(r).messages.map((m) => m.role)).toEqual(['user']);
  });
});

describe('when drawing groups', () => {
  test('GIVEN Zipf popularity THEN group 0 is drawn about 1/H(n) of the time and far more than the last group', () => {
    const picker = new GroupPicker(100, 'zipf', 1);
    const rng = new SeededRng(3);
    const counts = new Array<number>(100).fill(0);
    for (let i = 0; i < 20000; i++) counts[picker.pick(rng)]++;
    const h100 = Array.from({ length: 100 }, (_, i) => 1 / (i + 1)).reduce((a, b) => a + b, 0);
    expect(picker.probability(0)).toBeCloseTo(1 / h100, 10);
    expect(counts[0] / 20000).toBeGreaterThan(0.17);
    expect(counts[0] / 20000).toBeLessThan(0.21);
    expect(counts[99]).toBeLessThan(counts[0] / 30);
  });

  test('GIVEN uniform popularity THEN every group is drawn about equally often', () => {
    const picker = new GroupPicker(10, 'uniform');
    const rng = new SeededRng(4);
    const counts = new Array<number>(10).fill(0);
    for (let i = 0; i < 20000; i++) counts[picker.pick(rng)]++;
    for (const c of counts) expect(Math.abs(c - 2000)).toBeLessThan(200);
  });
});
