/**
 * A small reader of the Prometheus text exposition format (prom-client writes it but does not read it): enough
 * to sum counter samples across series, which is all the benchmark needs from a backend's /metrics.
 */
export interface PrometheusSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export class PrometheusTextError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PrometheusTextError';
  }
}

const NAME = /^[A-Za-z_:][A-Za-z0-9_:]*/;

function parseValue(raw: string, lineNumber: number): number {
  switch (raw) {
    case '+Inf':
    case 'Inf':
      return Infinity;
    case '-Inf':
      return -Infinity;
    case 'NaN':
      return NaN;
  }
  const value = Number(raw);
  if (raw === '' || Number.isNaN(value))
    throw new PrometheusTextError(`line ${lineNumber}: sample value '${raw}' is not a number`);
  return value;
}

/** Parses `{a="x",b="y\"z"}` starting at `text[start] === '{'`; returns the labels and the index after '}'. */
function parseLabels(text: string, start: number, lineNumber: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = start + 1;
  const fail = (what: string): never => {
    throw new PrometheusTextError(`line ${lineNumber}: ${what}`);
  };
  for (;;) {
    while (text[i] === ' ' || text[i] === ',') i++;
    if (text[i] === '}') return { labels, end: i + 1 };
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i));
    if (name === null) fail('bad label name');
    i += name![0].length;
    while (text[i] === ' ') i++;
    if (text[i] !== '=') fail(`expected '=' after label ${name![0]}`);
    i++;
    while (text[i] === ' ') i++;
    if (text[i] !== '"') fail(`expected '"' to open the value of label ${name![0]}`);
    i++;
    let value = '';
    for (;;) {
      const c = text[i];
      if (c === undefined) fail(`unterminated value of label ${name![0]}`);
      if (c === '"') break;
      if (c === '\\') {
        const next = text[i + 1];
        value += next === 'n' ? '\n' : (next ?? '');
        i += 2;
        continue;
      }
      value += c;
      i++;
    }
    labels[name![0]] = value;
    i++;
  }
}

/** Every sample in the text; comments (HELP, TYPE, EOF) and blank lines are skipped; a malformed line throws. */
export function parsePrometheusText(text: string): PrometheusSample[] {
  const samples: PrometheusSample[] = [];
  const lines = text.split(/\r?\n/);
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n].trim();
    if (line === '' || line.startsWith('#')) continue;
    const name = NAME.exec(line);
    if (name === null) throw new PrometheusTextError(`line ${n + 1}: bad metric name`);
    let i = name[0].length;
    let labels: Record<string, string> = {};
    if (line[i] === '{') {
      const parsed = parseLabels(line, i, n + 1);
      labels = parsed.labels;
      i = parsed.end;
    }
    // value, then an optional timestamp, then (OpenMetrics) an optional exemplar after '#'
    const rest = line.slice(i).trim().split(/\s+/);
    samples.push({ name: name[0], labels, value: parseValue(rest[0] ?? '', n + 1) });
  }
  return samples;
}

/**
 * The sum of a counter over every series (instances, engines, models). Counters appear as `<name>_total` in
 * current clients and as bare `<name>` in some older ones; `_total` series are used when present, else bare
 * ones, so a scrape exposing both is not counted twice. `_created` samples never count. Undefined when the
 * counter is absent.
 */
export function sumCounter(samples: readonly PrometheusSample[], name: string): number | undefined {
  const base = name.endsWith('_total') ? name.slice(0, -'_total'.length) : name;
  let total = 0;
  let totalSeen = false;
  let bare = 0;
  let bareSeen = false;
  for (const s of samples) {
    if (s.name === `${base}_total`) {
      total += s.value;
      totalSeen = true;
    } else if (s.name === base) {
      bare += s.value;
      bareSeen = true;
    }
  }
  return totalSeen ? total : bareSeen ? bare : undefined;
}
