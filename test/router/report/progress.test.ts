import {
  etaMs,
  formatDuration,
  ProgressReporter,
  progressBar,
  progressText,
  type LiveProgress,
} from '../../../router/src/report/progress';

const base: LiveProgress = {
  phase: 'measuring',
  wallMs: 10_000,
  modelMs: 10_000,
  sent: 60,
  finished: 50,
  failed: 2,
  inFlight: 10,
  expected: 200,
  expectedExact: true,
  fraction: 0.25,
};

class FakeStream {
  text = '';
  constructor(readonly isTTY: boolean) {}
  write(s: string): boolean {
    this.text += s;
    return true;
  }
}

describe('when progress is formatted', () => {
  it.each([
    [0, '0s'],
    [59_400, '59s'],
    [60_000, '1m00s'],
    [3_723_000, '1h02m'],
  ])('GIVEN %i ms THEN it reads %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('GIVEN a quarter done after 10 s THEN the ETA is 30 s and the line shows counts, rate and phase', () => {
    expect(etaMs(base)).toBe(30_000);
    expect(progressText(base)).toBe(
      'sent 60/200 · done 50 · errors 2 · in flight 10 · 5.0 req/s · elapsed 10s · ETA 30s · measuring',
    );
  });

  it('GIVEN an estimated request count THEN it is marked as approximate', () => {
    expect(progressText({ ...base, expectedExact: false })).toMatch(/^sent 60\/≈200 · /);
  });

  it('GIVEN nothing known about the end THEN there is no ETA and the bar shows ?', () => {
    const p = { ...base, fraction: null, expected: null };
    expect(etaMs(p)).toBeNull();
    expect(progressBar(p, 4)).toMatch(/^\[····\] {3}\?% sent 60 · /);
  });

  it('GIVEN a quarter done THEN a bar of 8 has 2 filled cells', () => {
    expect(progressBar(base, 8)).toMatch(/^\[##······\] {2}25% /);
  });
});

describe('when the reporter writes', () => {
  it('GIVEN a TTY THEN it redraws one line in place and ends it when done', () => {
    const stream = new FakeStream(true);
    const reporter = new ProgressReporter({ stream });
    reporter.update(base);
    reporter.update({ ...base, phase: 'done', fraction: 1 });
    expect(stream.text.split('\r\x1b[2K')).toHaveLength(3);
    expect(stream.text.endsWith('\n')).toBe(true);
    expect(stream.text.split('\n')).toHaveLength(2);
  });

  it('GIVEN no TTY THEN it writes a plain line at most every interval, plus the final one', () => {
    const stream = new FakeStream(false);
    const reporter = new ProgressReporter({ stream, lineIntervalMs: 5000 });
    for (const wallMs of [1000, 2000, 6500, 7000]) reporter.update({ ...base, wallMs });
    reporter.update({ ...base, wallMs: 7100, phase: 'done', fraction: 1 });
    const lines = stream.text.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(stream.text).not.toContain('\r');
    expect(lines[2]).toMatch(/ · done$/);
  });

  it('GIVEN silent mode THEN it writes nothing', () => {
    const stream = new FakeStream(true);
    const reporter = new ProgressReporter({ stream, mode: 'silent' });
    reporter.update(base);
    reporter.end();
    expect(stream.text).toBe('');
  });
});
