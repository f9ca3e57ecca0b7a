import { Readable } from 'node:stream';
import fc from 'fast-check';
import { sourceLines } from '../../../router/src/trace-import';

async function linesOf(chunks: Buffer[]) {
  const out = [];
  for await (const line of sourceLines(Readable.from(chunks))) out.push(line);
  return out;
}

describe('when a stream is split into lines', () => {
  test('GIVEN any UTF-8 text cut into chunks anywhere (even inside a character) THEN the lines are the text split on newlines, CR removed, the last one marked unterminated unless a newline ends the text', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: fc.constantFrom('a', 'é', '日', '😀', '\n', '\r\n', ' '), maxLength: 60 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        async (text, cuts) => {
          const bytes = Buffer.from(text, 'utf8');
          const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
          const chunks: Buffer[] = [];
          let from = 0;
          for (const p of [...points, bytes.length]) {
            if (p > from) chunks.push(bytes.subarray(from, p));
            from = Math.max(from, p);
          }
          const lines = await linesOf(chunks);
          const expected = text.split('\n');
          const terminatedAll = text.endsWith('\n') || text === '';
          if (terminatedAll) expected.pop();
          expect(lines.map((l) => l.text)).toEqual(expected.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l)));
          expect(lines.map((l) => l.lineNumber)).toEqual(expected.map((_, i) => i + 1));
          expect(lines.map((l) => l.terminated)).toEqual(
            expected.map((_, i) => i < expected.length - 1 || terminatedAll),
          );
        },
      ),
      { numRuns: 300, seed: 7 },
    );
  });
});
