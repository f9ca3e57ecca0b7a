import { EngineDriver } from '../../../router/src/emulator/engine-driver';
import { EngineModel, type EngineEvent } from '../../../router/src/emulator/engine-model';
import { builtinProfile } from '../../../router/src/emulator/engine-profile';
import { textOf } from './engine-text';

describe('engine driver', () => {
  let wallMs = 0;

  beforeEach(() => {
    jest.useFakeTimers();
    wallMs = 0;
  });
  afterEach(() => jest.useRealTimers());

  /** Advances the fake wall clock and fake timers together, in 1 ms slices. */
  function advance(ms: number): void {
    for (let i = 0; i < ms; i++) {
      wallMs += 1;
      jest.advanceTimersByTime(1);
    }
  }

  test('GIVEN time scale 10 THEN each event is delivered once the wall clock reaches its virtual time, in order', () => {
    const engine = new EngineModel(builtinProfile('tiny'), { tokenEvents: true });
    const driver = new EngineDriver(engine, { timeScale: 10, now: () => wallMs });
    const seen: { event: EngineEvent; virtualNow: number }[] = [];
    driver.submit({ id: 'a', promptText: textOf('a', 300), maxTokens: 20 }, (event) =>
      seen.push({ event, virtualNow: driver.virtualNowMs() }),
    );
    advance(100);
    const types = seen.map((s) => s.event.type);
    expect(types[0]).toBe('admitted');
    expect(types.filter((t) => t === 'token')).toHaveLength(20);
    expect(types[types.length - 1]).toBe('finished');
    for (const { event, virtualNow } of seen) expect(virtualNow).toBeGreaterThanOrEqual(event.timeMs);
    const times = seen.map((s) => s.event.timeMs);
    expect([...times].sort((x, y) => x - y)).toEqual(times);
    driver.close();
  });

  test('GIVEN a request aborted mid-stream THEN its listener hears nothing more and the engine frees it', () => {
    const engine = new EngineModel(builtinProfile('tiny'), { tokenEvents: true });
    const driver = new EngineDriver(engine, { timeScale: 1, now: () => wallMs });
    const seen: EngineEvent[] = [];
    driver.submit({ id: 'a', promptText: textOf('a', 100), maxTokens: 500 }, (event) => seen.push(event));
    advance(30);
    const heard = seen.length;
    expect(heard).toBeGreaterThan(1);
    driver.abort('a');
    advance(30);
    expect(seen).toHaveLength(heard);
    expect(engine.stats()).toMatchObject({ running: 0, usedBlocks: 0, aborted: 1 });
    driver.close();
  });

  test('GIVEN a closed driver THEN submit is refused and no timer fires', () => {
    const driver = new EngineDriver(new EngineModel(builtinProfile('tiny')), { timeScale: 1, now: () => wallMs });
    driver.close();
    expect(() => driver.submit({ id: 'a', promptText: 'x' }, () => undefined)).toThrow(/closed/);
    expect(jest.getTimerCount()).toBe(0);
  });

  test.each([0, -1, Number.POSITIVE_INFINITY])('GIVEN time scale %p THEN construction is refused', (timeScale) => {
    expect(() => new EngineDriver(new EngineModel(builtinProfile('tiny')), { timeScale })).toThrow(
      /timeScale must be a finite number > 0/,
    );
  });
});
