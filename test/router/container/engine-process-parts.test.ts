import fc from 'fast-check';
import { LinePrefixer, RestartBackoff } from '../../../router/src/container';

describe('when child output is forwarded line by line', () => {
  it('GIVEN chunks cut anywhere (inside lines and multi-byte characters) THEN every line comes out whole, prefixed, in order', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.string({ unit: 'grapheme', maxLength: 20 }).map((s) => s.replace(/[\n\r]/g, '')),
          { maxLength: 8 },
        ),
        fc.array(fc.nat(40), { maxLength: 6 }),
        (lines, cuts) => {
          const bytes = Buffer.from(lines.map((l) => `${l}\n`).join(''));
          let out = '';
          const prefixer = new LinePrefixer('[engine-2] ', (t) => (out += t));
          let at = 0;
          for (const cut of [...cuts].sort((a, b) => a - b)) {
            const to = Math.min(bytes.length, cut);
            if (to > at) prefixer.push(bytes.subarray(at, to));
            at = Math.max(at, to);
          }
          prefixer.push(bytes.subarray(at));
          prefixer.end();
          expect(out).toBe(lines.map((l) => `[engine-2] ${l}\n`).join(''));
        },
      ),
    );
  });

  it('GIVEN a last line without newline, CRLF endings or an endless line THEN it is flushed, stripped, or cut', () => {
    const writes: string[] = [];
    const p = new LinePrefixer('[e] ', (t) => writes.push(t), 8);
    p.push('a\r\nb');
    p.push('0123456789abcdef');
    p.end();
    expect(writes.join('')).toBe('[e] a\n[e] b0123456\n[e] 789abcde\n[e] f\n');
  });
});

describe('when an engine keeps exiting', () => {
  it('GIVEN quick failures THEN the delay doubles up to the maximum; a long run resets it', () => {
    const b = new RestartBackoff(1000, 30_000, 60_000);
    expect([0, 0, 0, 0, 0, 0, 0].map((ran) => b.nextDelay(ran))).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000]);
    expect(b.nextDelay(60_000)).toBe(1000);
    expect(b.nextDelay(10)).toBe(2000);
  });
});
