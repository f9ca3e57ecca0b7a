import fc from 'fast-check';
import { SseDecoder, type SseEvent } from '../../../router/src/benchmark';

function decodeAll(chunks: Uint8Array[]): SseEvent[] {
  const decoder = new SseDecoder();
  const events: SseEvent[] = [];
  for (const c of chunks) events.push(...decoder.push(c));
  events.push(...decoder.end());
  return events;
}

function splitAt(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let from = 0;
  for (const p of points) {
    out.push(bytes.subarray(from, p));
    from = p;
  }
  out.push(bytes.subarray(from));
  return out;
}

describe('when SSE bytes are decoded', () => {
  it('GIVEN LF, CRLF and CR line ends THEN each gives the same events', () => {
    for (const eol of ['\n', '\r\n', '\r']) {
      const text = `data: a${eol}${eol}: keep-alive${eol}event: error${eol}data: b${eol}data: c${eol}${eol}`;
      expect(decodeAll([Buffer.from(text)])).toEqual([
        { type: 'message', data: 'a' },
        { type: 'error', data: 'b\nc' },
      ]);
    }
  });

  it('GIVEN a final event without its blank line THEN it is still delivered at the end', () => {
    expect(decodeAll([Buffer.from('data: x\n\ndata: [DONE]')])).toEqual([
      { type: 'message', data: 'x' },
      { type: 'message', data: '[DONE]' },
    ]);
  });

  it('GIVEN a field without a space after the colon, or without a colon THEN it is read per the format', () => {
    expect(decodeAll([Buffer.from('data:x\ndata\n\n')])).toEqual([{ type: 'message', data: 'x\n' }]);
  });

  it('GIVEN any split of the bytes into chunks (CRLF and multi-byte characters cut included) THEN the events are the same as unsplit', () => {
    const event = fc.record({
      type: fc.constantFrom('', 'error', 'message'),
      lines: fc.array(
        fc.string({ unit: 'grapheme', maxLength: 12 }).map((s) => s.replace(/[\r\n]/g, '')),
        { minLength: 1, maxLength: 3 },
      ),
    });
    fc.assert(
      fc.property(
        fc.array(event, { minLength: 1, maxLength: 5 }),
        fc.constantFrom('\n', '\r\n', '\r'),
        fc.array(fc.nat(), { maxLength: 8 }),
        (events, eol, cuts) => {
          const text = events
            .map(
              (e) =>
                `${e.type ? `event: ${e.type}${eol}` : ''}${e.lines.map((l) => `data: ${l}`).join(eol)}${eol}${eol}`,
            )
            .join('');
          const bytes = Buffer.from(text, 'utf8');
          const expected = events.map((e) => ({ type: e.type || 'message', data: e.lines.join('\n') }));
          expect(decodeAll(splitAt(bytes, cuts))).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});
