import { Backend, BackendSet } from '../../../router/src/server/backend';

const POOL = { connections: 1, headersTimeoutMs: 1_000, bodyTimeoutMs: 1_000 };

function backendSet(count: number): BackendSet {
  return new BackendSet(
    Array.from({ length: count }, (_, i) => {
      const origin = `http://127.0.0.1:${9000 + i}`;
      return new Backend({ id: origin, origin, basePath: '' }, POOL, 'pending');
    }),
  );
}

describe('when the backend set builds a routing snapshot (allHealthySameModels, kept as backends change)', () => {
  let set: BackendSet;
  beforeEach(() => {
    set = backendSet(3);
  });
  afterEach(async () => {
    await Promise.all(set.list.map((b) => b.pool.close()));
  });

  const flag = (excluded?: string, only?: string) => set.snapshot(0, excluded, only).allHealthySameModels;

  it('GIVEN backends not yet health-checked THEN false; once all are admitted THEN true', () => {
    expect(flag()).toBe(false);
    for (const b of set.list) b.health = 'healthy';
    expect(flag()).toBe(true);
  });

  it('GIVEN one backend ejected after a snapshot said true THEN the next snapshot says false, and true again once it is back', () => {
    for (const b of set.list) b.health = 'healthy';
    expect(flag()).toBe(true);
    set.list[1].health = 'ejected';
    expect(flag()).toBe(false);
    set.list[1].health = 'healthy';
    expect(flag()).toBe(true);
  });

  it('GIVEN model lists read from the engines THEN true while they are equal, false once one differs', () => {
    for (const b of set.list) b.health = 'healthy';
    for (const b of set.list) b.servedModels = new Set(['base', 'sql']);
    expect(flag()).toBe(true);
    set.list[2].servedModels = new Set(['base']);
    expect(flag()).toBe(false);
  });

  it('GIVEN a backend excluded on retry, or a session pinned to one backend THEN not true (some are shown unhealthy)', () => {
    for (const b of set.list) b.health = 'healthy';
    expect(flag(set.list[0].id)).not.toBe(true);
    expect(flag(undefined, set.list[0].id)).not.toBe(true);
    expect(flag()).toBe(true);
  });

  it('GIVEN the set observes its instances THEN the observed views carry the same answer', () => {
    set.observeInstances(1_000);
    expect(flag()).toBe(false);
    for (const b of set.list) b.health = 'healthy';
    expect(flag()).toBe(true);
  });
});
