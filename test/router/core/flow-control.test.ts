import fc from 'fast-check';
import {
  FLOW_CONTROL_DEFAULTS,
  FlowControlQueue,
  isLowerClass,
  type FlowControlSettings,
} from '../../../router/src/core/flow-control';

const settings = (over: Partial<FlowControlSettings> = {}): FlowControlSettings => ({
  ...FLOW_CONTROL_DEFAULTS,
  queuedPrefillBoundTokens: 1000,
  maxWaiting: 3,
  ...over,
});

describe('flow control by priority class', () => {
  describe('when a request arrives', () => {
    test('GIVEN no priority or a priority at most 0 THEN it is urgent: routed and admitted whatever the queue', () => {
      const queue = new FlowControlQueue<string>(settings());
      expect(isLowerClass(undefined)).toBe(false);
      expect(isLowerClass(0)).toBe(false);
      expect(isLowerClass(-1)).toBe(false);
      expect(isLowerClass(1)).toBe(true);
      queue.hold('waiting-1', 1);
      expect(queue.offer('urgent', 0)).toBe('route');
      expect(queue.offer('plain', undefined)).toBe('route');
      expect(queue.admits(0, 1_000_000)).toBe(true);
    });

    test('GIVEN a lower class THEN it is admitted up to the bound (1000) and not above (1001)', () => {
      const queue = new FlowControlQueue<string>(settings());
      expect(queue.admits(1, 1000)).toBe(true);
      expect(queue.admits(1, 1001)).toBe(false);
    });

    test('GIVEN requests of its class or a more urgent lower class waiting THEN it waits behind them (order kept); a less urgent one does not hold it', () => {
      const queue = new FlowControlQueue<string>(settings({ maxWaiting: 10 }));
      queue.hold('p2-old', 2);
      expect(queue.offer('p1', 1)).toBe('route');
      queue.hold('p1-held', 1);
      expect(queue.offer('p1-new', 1)).toBe('wait');
      expect(queue.offer('p2-new', 2)).toBe('wait');
      const order: string[] = [];
      for (let head = queue.peek(); head !== undefined; head = queue.peek()) {
        order.push(head.item);
        queue.shift();
      }
      expect(order).toEqual(['p1-held', 'p1-new', 'p2-old', 'p2-new']);
    });

    test('GIVEN maxWaiting 3 held THEN the fourth is refused, never dropped silently', () => {
      const queue = new FlowControlQueue<string>(settings());
      expect(['a', 'b', 'c'].map((id) => queue.hold(id, 1))).toEqual(['wait', 'wait', 'wait']);
      expect(queue.offer('d', 1)).toBe('refuse');
      expect(queue.length).toBe(3);
    });

    test('GIVEN mode off THEN every request is routed and admitted', () => {
      const queue = new FlowControlQueue<string>(settings({ mode: 'off' }));
      queue.hold('a', 1);
      expect(queue.offer('b', 5)).toBe('route');
      expect(queue.admits(5, 1e9)).toBe(true);
    });
  });

  describe('when a held request leaves before its turn (its client went away)', () => {
    test('GIVEN three held THEN removing the middle one keeps the others in order, and removing it again says false', () => {
      const queue = new FlowControlQueue<string>(settings({ maxWaiting: 10 }));
      queue.hold('a', 1);
      queue.hold('b', 1);
      queue.hold('c', 2);
      expect(queue.remove('b')).toBe(true);
      expect(queue.remove('b')).toBe(false);
      expect(queue.length).toBe(2);
      expect(queue.peek()?.item).toBe('a');
      queue.shift();
      expect(queue.peek()?.item).toBe('c');
    });
  });

  describe('when the router asks whether a request could be held (mayHold: the server decides the others at once)', () => {
    test('GIVEN any priority, mode and queue THEN only a lower class with flow control on may be held, and every other request is routed and admitted anywhere', () => {
      fc.assert(
        fc.property(
          fc.option(fc.integer({ min: -1_000_000, max: 1_000_000 }), { nil: undefined }),
          fc.constantFrom('on' as const, 'off' as const),
          fc.array(fc.integer({ min: 1, max: 5 }), { maxLength: 3 }),
          fc.nat({ max: 10_000 }),
          (priority, mode, held, queued) => {
            const queue = new FlowControlQueue<string>(settings({ mode, maxWaiting: 3 }));
            held.forEach((p, i) => queue.hold(`held-${i}`, p));
            const mayHold = queue.mayHold(priority);
            expect(mayHold).toBe(mode === 'on' && priority !== undefined && priority > 0);
            if (!mayHold) {
              expect(queue.offer('new', priority)).toBe('route');
              expect(queue.admits(priority, queued)).toBe(true);
            }
          },
        ),
      );
    });
  });
});
