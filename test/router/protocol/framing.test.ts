import fc from 'fast-check';
import { crc32 } from 'node:zlib';
import { eventStream, sse } from '../../../router/src/protocol';

describe('when event-stream messages are encoded', () => {
  it('GIVEN the standard CRC32 check value THEN zlib.crc32 is the CRC the framing needs', () => {
    expect(crc32(Buffer.from('123456789'))).toBe(0xcbf43926);
  });

  it('GIVEN any payload THEN a PayloadPart decodes back with its headers and both CRCs valid', () => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 5 }), (payloads) => {
        const bytes = Buffer.concat(payloads.map((p) => eventStream.payloadPartMessage(p)));
        const decoded = eventStream.decodeMessages(bytes);
        expect(decoded.map((m) => [...m.payload])).toEqual(payloads.map((p) => [...p]));
        for (const m of decoded) {
          expect(m.headers).toEqual({
            ':event-type': 'PayloadPart',
            ':content-type': 'application/octet-stream',
            ':message-type': 'event',
          });
        }
      }),
    );
  });

  it('GIVEN a ModelStreamError THEN it is an exception message with a JSON payload', () => {
    const [m] = eventStream.decodeMessages(
      eventStream.modelStreamErrorMessage('backend died', 'upstream_stream_failed'),
    );
    expect(m.headers[':message-type']).toBe('exception');
    expect(m.headers[':exception-type']).toBe('ModelStreamError');
    expect(JSON.parse(m.payload.toString())).toEqual({ Message: 'backend died', ErrorCode: 'upstream_stream_failed' });
  });

  it('GIVEN one flipped byte THEN decoding reports a CRC mismatch', () => {
    const bytes = eventStream.payloadPartMessage(Buffer.from('hello'));
    bytes[bytes.length - 6] ^= 1;
    expect(() => eventStream.decodeMessages(bytes)).toThrow('message CRC mismatch');
  });
});

describe('when SSE bytes are aligned on event boundaries', () => {
  const event = fc.string({ minLength: 1, maxLength: 40 }).map((s) => `data: ${s.replace(/[\r\n]/g, ' ')}\n\n`);

  it('GIVEN a stream split at arbitrary points THEN the output is the input, every piece ends on a boundary', () => {
    fc.assert(
      fc.property(
        fc.array(event, { minLength: 1, maxLength: 10 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (events, cuts) => {
          const all = Buffer.from(events.join(''));
          const points = [...new Set(cuts.map((c) => c % all.length))].sort((a, b) => a - b);
          const chunks: Buffer[] = [];
          let last = 0;
          for (const p of [...points, all.length]) {
            chunks.push(all.subarray(last, p));
            last = p;
          }
          const aligner = new sse.SseEventAligner();
          const out: Buffer[] = [];
          for (const c of chunks) {
            const piece = aligner.push(c);
            if (piece.length > 0) {
              expect(piece.toString().endsWith('\n\n')).toBe(true);
              out.push(piece);
            }
          }
          expect(aligner.flush()).toBeUndefined();
          expect(Buffer.concat(out).toString()).toBe(all.toString());
        },
      ),
    );
  });

  it('GIVEN CRLF-delimited events THEN the CRLF boundary counts', () => {
    const aligner = new sse.SseEventAligner();
    expect(aligner.push(Buffer.from('data: a\r\n\r\ndata: b')).toString()).toBe('data: a\r\n\r\n');
    expect(aligner.hasPartialEvent).toBe(true);
    expect(aligner.flush()?.toString()).toBe('data: b');
  });

  it('GIVEN an error THEN the terminal event is an OpenAI error then [DONE]', () => {
    expect(sse.sseErrorEvent({ message: 'm', type: 'upstream_error', code: 'upstream_stream_failed' }).toString()).toBe(
      'data: {"error":{"message":"m","type":"upstream_error","code":"upstream_stream_failed"}}\n\ndata: [DONE]\n\n',
    );
  });
});
