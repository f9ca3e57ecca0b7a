import { parseSimulateFlags } from '../../../router/src/cli/simulate-command';

const parse = (flags: Record<string, string>) => parseSimulateFlags({ jobs: '1', ...flags }).kvEvents;

describe('when simulate is given --kv-events flags', () => {
  it('GIVEN none THEN the routers use their own estimate', () => {
    expect(parse({})).toBeUndefined();
  });

  it('GIVEN --kv-events on THEN events arrive at once and none is lost by default', () => {
    expect(parse({ kvEvents: 'on' })).toEqual({ delayMs: 0, lossRate: 0 });
  });

  it.each([
    ['0', 0],
    ['60000', 60_000],
    ['12.5', 12.5],
  ])('GIVEN --kv-events-delay-ms %s THEN it is taken', (raw, delayMs) => {
    expect(parse({ kvEvents: 'on', kvEventsDelayMs: raw })?.delayMs).toBe(delayMs);
  });

  it.each([
    ['0', 0],
    ['1', 0.01],
    ['100', 1],
  ])('GIVEN --kv-events-loss %s (percent) THEN the loss rate is its fraction', (raw, lossRate) => {
    expect(parse({ kvEvents: 'on', kvEventsLoss: raw })?.lossRate).toBe(lossRate);
  });

  it.each([
    [{ kvEvents: 'yes' }, '--kv-events must be one of on, off (got "yes")'],
    [{ kvEvents: 'on', kvEventsDelayMs: '-1' }, '--kv-events-delay-ms must be a number between 0 and 60000 (got "-1")'],
    [
      { kvEvents: 'on', kvEventsDelayMs: '60001' },
      '--kv-events-delay-ms must be a number between 0 and 60000 (got "60001")',
    ],
    [{ kvEvents: 'on', kvEventsLoss: '-0.5' }, '--kv-events-loss must be a number between 0 and 100 (got "-0.5")'],
    [{ kvEvents: 'on', kvEventsLoss: '101' }, '--kv-events-loss must be a number between 0 and 100 (got "101")'],
    [{ kvEventsDelayMs: '50' }, '--kv-events-delay-ms need --kv-events on'],
    [{ kvEvents: 'off', kvEventsLoss: '1' }, '--kv-events-loss need --kv-events on'],
  ])('GIVEN %j THEN the flags are refused naming the flag and its range', (flags, message) => {
    expect(() => parse(flags)).toThrow(message);
  });
});
