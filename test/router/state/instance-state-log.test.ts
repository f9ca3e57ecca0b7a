import fc from 'fast-check';
import {
  InstanceStateLog,
  ObservedInstance,
  observedLoadOf,
  type InstanceStateUpdate,
} from '../../../router/src/state/instance-state-log';
import { decodeInstanceState, encodeInstanceState } from '../../../router/src/server/instance-state-wire';
import { testBlockKey } from './test-block-keys';

/** Prompt `p` of a conversation tree: blocks 0..shared-1 common to all prompts, then its own. */
function chain(prompt: number, blocks: number, shared = 0): string[] {
  return Array.from({ length: blocks }, (_, i) => testBlockKey(i < shared ? -(i + 1) : prompt * 1000 + i));
}

/** Through the wire format, as an observer over HTTP gets it. */
function overTheWire(update: InstanceStateUpdate): InstanceStateUpdate {
  return decodeInstanceState(JSON.parse(encodeInstanceState(update)));
}

describe('when an instance publishes its state and routers observe it', () => {
  it('GIVEN any prompts and observers catching up at any points THEN every observer matches exactly what the instance holds', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 4, max: 120 }),
        fc.array(
          fc.record({
            blocks: fc.integer({ min: 0, max: 30 }),
            shared: fc.integer({ min: 0, max: 8 }),
            lookFast: fc.boolean(),
            lookSlow: fc.boolean(),
            // What the engine then reports cached, in tokens (64-character blocks = 16 tokens each); undefined: nothing.
            engineCached: fc.option(fc.integer({ min: 0, max: 500 }), { nil: undefined }),
          }),
          {
            minLength: 1,
            maxLength: 50,
          },
        ),
        (capacity, prompts) => {
          const log = new InstanceStateLog(64, capacity, 'e1');
          const fast = new ObservedInstance();
          const slow = new ObservedInstance();
          const reference = new ObservedInstance();
          prompts.forEach((p, i) => {
            const admitted = log.admit(chain(i, p.blocks, Math.min(p.shared, p.blocks)), p.blocks * 16 + 5);
            admitted.end();
            if (p.engineCached !== undefined) admitted.engineCached(p.engineCached);
            if (p.lookFast) fast.apply(overTheWire(log.updateSince(fast.epoch, fast.seq)), i);
            if (p.lookSlow) slow.apply(log.updateSince(slow.epoch, slow.seq), i);
          });
          for (const o of [fast, slow]) o.apply(log.updateSince(o.epoch, o.seq), prompts.length);
          reference.apply(log.updateSince(undefined, undefined), prompts.length);
          for (const o of [fast, slow]) {
            expect(o.seq).toBe(reference.seq);
            expect(o.size).toBe(reference.size);
            expect(o.size).toBeLessThanOrEqual(capacity);
            prompts.forEach((p, i) => {
              const hashes = chain(i, p.blocks, Math.min(p.shared, p.blocks));
              expect(o.match(hashes)).toBe(reference.match(hashes));
            });
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('GIVEN an observer within the log THEN it gets only the new events; one further behind than the index gets a snapshot', () => {
    const log = new InstanceStateLog(64, 10, 'e1');
    const observer = new ObservedInstance();
    observer.apply(log.updateSince(undefined, undefined), 0);
    log.admit(chain(1, 4), 80);
    const delta = log.updateSince(observer.epoch, observer.seq);
    expect(delta.events).toHaveLength(1);
    expect(delta.snapshot).toBeUndefined();
    observer.apply(delta, 1);
    // 12 blocks recorded since: more than the index holds, so the log has let the oldest go.
    for (let p = 2; p <= 4; p++) log.admit(chain(p, 4), 80);
    const behind = log.updateSince(observer.epoch, 0);
    expect(behind.snapshot).toBeDefined();
    expect(behind.events).toBeUndefined();
  });

  it('GIVEN many short prompts THEN the log stays bounded by the index and observers at any distance still catch up exactly', () => {
    const log = new InstanceStateLog(64, 50, 'e');
    const near = new ObservedInstance();
    let far: InstanceStateUpdate | undefined;
    for (let i = 0; i < 600; i++) {
      log.admit(chain(i, 1 + (i % 3)), 40).end();
      if (i % 13 === 0) near.apply(log.updateSince(near.epoch, near.seq), i);
      if (i === 100) far = log.updateSince(undefined, undefined);
    }
    near.apply(log.updateSince(near.epoch, near.seq), 600);
    const farObserver = new ObservedInstance();
    farObserver.apply(far!, 100);
    const update = log.updateSince(farObserver.epoch, farObserver.seq);
    expect(update.snapshot).toBeDefined(); // 500 prompts behind: more than the log keeps
    farObserver.apply(update, 600);
    const recent = log.updateSince('e', log.updateSince(undefined, undefined).seq - 10);
    expect(recent.events).toHaveLength(10);
    const reference = new ObservedInstance();
    reference.apply(log.updateSince(undefined, undefined), 600);
    for (const o of [near, farObserver]) {
      expect(o.size).toBe(log.indexedBlocks);
      for (let i = 0; i < 600; i++) expect(o.match(chain(i, 1 + (i % 3)))).toBe(reference.match(chain(i, 1 + (i % 3))));
    }
    expect(reference.match(chain(599, 3))).toBe(3);
  });

  it('GIVEN a restarted instance (new epoch) THEN the observer gets a snapshot; an update that does not follow on is refused', () => {
    const before = new InstanceStateLog(64, 100, 'before');
    const observer = new ObservedInstance();
    before.admit(chain(1, 5), 100);
    observer.apply(before.updateSince(undefined, undefined), 0);
    expect(observer.match(chain(1, 5))).toBe(5);
    const after = new InstanceStateLog(64, 100, 'after');
    after.admit(chain(2, 3), 60);
    const update = after.updateSince(observer.epoch, observer.seq);
    expect(update.snapshot).toBeDefined();
    observer.apply(update, 1);
    expect(observer.match(chain(1, 5))).toBe(0);
    expect(observer.match(chain(2, 3))).toBe(3);
    after.admit(chain(3, 3), 60);
    after.admit(chain(4, 3), 60);
    const skipping = { ...after.updateSince('after', 2), seq: 3, events: [{ record: chain(4, 3) }] };
    expect(() => observer.apply({ ...skipping, seq: 5 }, 2)).toThrow(/does not follow on/);
  });

  it('GIVEN requests in any phase THEN the published load counts them, and returns to zero when all end', () => {
    const log = new InstanceStateLog(64, 100, 'e');
    const a = log.admit(chain(1, 4), 100);
    const b = log.admit(chain(1, 4), 100);
    // a recorded b's 4 blocks of 64 characters (64 tokens): only the rest of b is prefill.
    expect([a.ticket.prefillTokens, b.ticket.prefillTokens]).toEqual([100, 100 - 64]);
    expect(log.updateSince(undefined, undefined).load).toEqual({
      inFlight: 2,
      queuedPrefillTokens: 136,
      decodeSequences: 0,
    });
    b.firstToken();
    const update = log.updateSince(undefined, undefined);
    expect(update.load).toEqual({ inFlight: 2, queuedPrefillTokens: 100, decodeSequences: 1 });
    const version = log.version;
    a.end();
    b.end();
    b.end();
    expect(log.version).toBe(version + 2);
    expect(log.updateSince(undefined, undefined).load).toEqual({
      inFlight: 0,
      queuedPrefillTokens: 0,
      decodeSequences: 0,
    });
  });

  it('GIVEN the engine reports fewer cached tokens than the index predicted THEN the index drops what the engine evicted, and observers follow', () => {
    const log = new InstanceStateLog(64, 1000, 'e');
    const observer = new ObservedInstance();
    log.admit(chain(1, 6), 200).end(); // older: evicted along with what the engine lost
    log.admit(chain(2, 6), 200).end();
    const again = log.admit(chain(2, 6), 200); // predicted: 6 blocks cached
    again.end();
    log.admit(chain(3, 6), 200).end();
    // Within the tolerance (5 of 6 blocks delivered) nothing changes.
    const before = log.updateSince(undefined, undefined).seq;
    again.engineCached(16 * 5);
    expect(log.updateSince(undefined, undefined).seq).toBe(before);
    // A request whose engine served nothing of its 6 predicted blocks: everything used no later than its first block goes.
    const missed = log.admit(chain(2, 6), 200);
    missed.engineCached(0);
    missed.engineCached(0); // counted once
    observer.apply(log.updateSince(undefined, undefined), 0);
    expect(observer.match(chain(1, 6))).toBe(0);
    expect(observer.match(chain(2, 6))).toBe(6); // recorded again: the engine just computed it
    expect(observer.match(chain(3, 6))).toBe(6); // used after the evidence's cut-off
    const wired = new ObservedInstance();
    wired.apply(overTheWire(log.updateSince(undefined, undefined)), 0);
    expect(wired.match(chain(1, 6))).toBe(0);
  });

  it("GIVEN this router's changes since the observation THEN its view adds them to the instance's count", () => {
    const observed = { inFlight: 10, queuedPrefillTokens: 5000, decodeSequences: 4 };
    expect(
      observedLoadOf(
        observed,
        { inFlight: 3, queuedPrefillTokens: 900, decodeSequences: 1 },
        { inFlight: 2, queuedPrefillTokens: 1000, decodeSequences: 0 },
      ),
    ).toEqual({
      inFlight: 11,
      queuedPrefillTokens: 4900,
      decodeSequences: 5,
    });
    // Never below what this router alone has there (its own requests are certain).
    expect(
      observedLoadOf(
        { inFlight: 0, queuedPrefillTokens: 0, decodeSequences: 0 },
        { inFlight: 2, queuedPrefillTokens: 10, decodeSequences: 0 },
        { inFlight: 5, queuedPrefillTokens: 0, decodeSequences: 3 },
      ),
    ).toEqual({
      inFlight: 2,
      queuedPrefillTokens: 10,
      decodeSequences: 0,
    });
  });

  it.each([
    ['not an object', 7, /update must be an object/],
    ['another format', { format: 'x' }, /format must be/],
    [
      'a negative seq',
      {
        ...JSON.parse(encodeInstanceState(new InstanceStateLog(64, 10, 'e').updateSince(undefined, undefined))),
        seq: -1,
      },
      /seq must be an integer/,
    ],
    [
      'neither snapshot nor events',
      {
        ...JSON.parse(encodeInstanceState(new InstanceStateLog(64, 10, 'e').updateSince(undefined, undefined))),
        snapshot: undefined,
      },
      /snapshot or events/,
    ],
    [
      'a ragged hash list',
      {
        ...JSON.parse(encodeInstanceState(new InstanceStateLog(64, 10, 'e').updateSince(undefined, undefined))),
        snapshot: undefined,
        events: ['AAAAAAA='],
      },
      /whole number of 8-byte/,
    ],
    [
      'the unkeyed format of older routers',
      {
        ...JSON.parse(encodeInstanceState(new InstanceStateLog(64, 10, 'e').updateSince(undefined, undefined))),
        format: 'prefix-router/instance-state/v1',
      },
      /before keyed block hashes/,
    ],
    [
      'without its hash key id',
      {
        ...JSON.parse(encodeInstanceState(new InstanceStateLog(64, 10, 'e').updateSince(undefined, undefined))),
        hashKey: undefined,
      },
      /hashKey must be an object/,
    ],
    [
      'a malformed hash key id',
      {
        ...JSON.parse(encodeInstanceState(new InstanceStateLog(64, 10, 'e').updateSince(undefined, undefined))),
        hashKey: { id: 'x', source: 'file' },
      },
      /hashKey.id must be 16 hex digits/,
    ],
    [
      'a negative eviction',
      {
        ...JSON.parse(encodeInstanceState(new InstanceStateLog(64, 10, 'e').updateSince(undefined, undefined))),
        snapshot: undefined,
        events: [-3],
      },
      /events\[0\] must be an integer/,
    ],
  ])('GIVEN an update that is %s THEN decoding names the problem', (_what, value, message) => {
    expect(() => decodeInstanceState(value)).toThrow(message);
  });
});
