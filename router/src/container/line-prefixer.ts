import { StringDecoder } from 'node:string_decoder';

/**
 * Forwards a child's output line by line with a `[engine-2] ` prefix, so lines of several engines never mix
 * within a line. A line is written when its newline arrives; a partial line waits for the rest (or for end()),
 * except that a line longer than `maxLineBytes` is cut, so a child that never prints a newline cannot grow
 * memory without bound.
 */
export class LinePrefixer {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';

  constructor(
    private readonly prefix: string,
    private readonly write: (text: string) => void,
    private readonly maxLineBytes = 64 * 1024,
  ) {}

  push(chunk: Buffer | string): void {
    const text = this.pending + (typeof chunk === 'string' ? chunk : this.decoder.write(chunk));
    const lines = text.split('\n');
    this.pending = lines.pop() ?? '';
    let out = '';
    for (const line of lines) out += `${this.prefix}${stripCarriageReturn(line)}\n`;
    while (this.pending.length > this.maxLineBytes) {
      out += `${this.prefix}${this.pending.slice(0, this.maxLineBytes)}\n`;
      this.pending = this.pending.slice(this.maxLineBytes);
    }
    if (out.length > 0) this.write(out);
  }

  /** Writes what is left (a last line without a newline). */
  end(): void {
    const rest = this.pending + this.decoder.end();
    this.pending = '';
    if (rest.length > 0) this.write(`${this.prefix}${stripCarriageReturn(rest)}\n`);
  }
}

function stripCarriageReturn(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}
