import fc from 'fast-check';
import { EngineSchedule } from '../../../router/src/sim/engine-schedule';

/** What the simulator computed before the schedule: a scan in index order. */
function scan(times: readonly (number | undefined)[]): { first: number; firstTime: number; secondTime: number } {
  let first = -1;
  let firstTime = Infinity;
  let secondTime = Infinity;
  times.forEach((s, i) => {
    if (s === undefined) return;
    if (s < firstTime) {
      secondTime = firstTime;
      firstTime = s;
      first = i;
    } else if (s < secondTime) {
      secondTime = s;
    }
  });
  return { first, firstTime, secondTime };
}

describe('when engines change their next step times', () => {
  test('GIVEN any sequence of re-keyed engines THEN first, its time and the second time equal an index-order scan', () => {
    // Few distinct times, so ties (lowest index wins) are frequent.
    const time = fc.oneof(
      fc.constant(undefined),
      fc.integer({ min: 0, max: 6 }),
      fc.double({ min: 0, max: 10, noNaN: true }),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.array(fc.tuple(fc.nat(), time), { maxLength: 120 }),
        (count, updates) => {
          const times: (number | undefined)[] = Array.from({ length: count }, (_, i) =>
            i % 3 === 0 ? undefined : i % 4,
          );
          const schedule = new EngineSchedule(count, (i) => times[i]);
          const check = () => {
            const want = scan(times);
            expect({
              first: schedule.first(),
              firstTime: schedule.firstTime(),
              secondTime: schedule.secondTime(),
            }).toEqual(want);
          };
          check();
          for (const [at, t] of updates) {
            const engine = at % count;
            times[engine] = t;
            schedule.update(engine);
            check();
          }
        },
      ),
    );
  });
});
