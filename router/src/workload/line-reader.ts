import { closeSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

export interface NumberedLine {
  /** 1-based line number in the file. */
  readonly lineNumber: number;
  readonly text: string;
}

/**
 * Lines of a UTF-8 text file, read in fixed-size chunks: memory stays bounded by the chunk plus the longest
 * line, whatever the file size. Synchronous on purpose, so the simulator's virtual-time loop can pull requests
 * without awaiting. A trailing "\r" (CRLF files) is removed. The file is closed when iteration ends or stops.
 */
export function* readLines(path: string, chunkBytes = 1 << 16): Generator<NumberedLine, void, undefined> {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(chunkBytes);
    const decoder = new StringDecoder('utf8');
    let pending = '';
    let lineNumber = 0;
    for (;;) {
      const read = readSync(fd, buffer, 0, chunkBytes, null);
      if (read === 0) break;
      pending += decoder.write(buffer.subarray(0, read));
      let start = 0;
      for (let nl = pending.indexOf('\n', start); nl !== -1; nl = pending.indexOf('\n', start)) {
        lineNumber++;
        yield { lineNumber, text: stripCr(pending.slice(start, nl)) };
        start = nl + 1;
      }
      pending = pending.slice(start);
    }
    pending += decoder.end();
    if (pending.length > 0) yield { lineNumber: lineNumber + 1, text: stripCr(pending) };
  } finally {
    closeSync(fd);
  }
}

function stripCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}
