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

describe('when simulate is given --restart-* and --bypass flags', () => {
  const flagsOf = (flags: Record<string, string>) => parseSimulateFlags({ jobs: '1', instances: '3', ...flags });

  it('GIVEN none THEN nothing restarts and nothing bypasses the routers', () => {
    expect(flagsOf({})).toMatchObject({ engineRestart: undefined, bypassShare: 0 });
  });

  it('GIVEN --restart-at 30 THEN instance 0 restarts at 30 s, unseen by health checks', () => {
    expect(flagsOf({ restartAt: '30' }).engineRestart).toEqual({ instance: 0, atMs: 30_000, downMs: 0 });
  });

  it.each([
    ['0', 0],
    ['2', 2],
  ])('GIVEN --restart-instance %s of 3 instances THEN it is taken', (raw, instance) => {
    expect(flagsOf({ restartAt: '1', restartInstance: raw }).engineRestart?.instance).toBe(instance);
  });

  it.each([
    ['0', 0],
    ['600', 600_000],
  ])('GIVEN --restart-down %s THEN it is taken in ms', (raw, downMs) => {
    expect(flagsOf({ restartAt: '1', restartDown: raw }).engineRestart?.downMs).toBe(downMs);
  });

  it.each([
    ['0', 0],
    ['30', 0.3],
    ['100', 1],
  ])('GIVEN --bypass %s THEN the share is its fraction', (raw, share) => {
    expect(flagsOf({ bypass: raw }).bypassShare).toBe(share);
  });

  it.each([
    [{ restartAt: '-1' }, '--restart-at must be a number between 0 and 604800 (got "-1")'],
    [{ restartAt: '604801' }, '--restart-at must be a number between 0 and 604800 (got "604801")'],
    [{ restartAt: '1', restartInstance: '-1' }, '--restart-instance must be an integer between 0 and 2 (got "-1")'],
    [{ restartAt: '1', restartInstance: '3' }, '--restart-instance must be an integer between 0 and 2 (got "3")'],
    [{ restartAt: '1', restartDown: '-1' }, '--restart-down must be a number between 0 and 600 (got "-1")'],
    [{ restartAt: '1', restartDown: '601' }, '--restart-down must be a number between 0 and 600 (got "601")'],
    [{ restartDown: '5' }, '--restart-down need --restart-at'],
    [{ bypass: '-1' }, '--bypass must be a number between 0 and 100 (got "-1")'],
    [{ bypass: '101' }, '--bypass must be a number between 0 and 100 (got "101")'],
  ])('GIVEN %j THEN the flags are refused naming the flag and its range', (flags, message) => {
    expect(() => flagsOf(flags)).toThrow(message);
  });
});
