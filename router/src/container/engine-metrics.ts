import { request } from 'undici';
import { parsePrometheusText, sumCounter } from '../common/prometheus-text';

/**
 * The engines' own Prometheus metrics (vLLM's `vllm:*`), scraped from each engine's /metrics. Two uses: the
 * router's GET /metrics appends them, so a single scrape of the container (SageMaker detailed observability,
 * a Prometheus agent) sees router and engine metrics together; and the EMF emitter reads the engines' prompt
 * and prefix-cache counters from them.
 */
export const ENGINE_LABEL = 'prefix_router_engine';

/** vLLM counters, in tokens: prompt tokens of requests that got their first token; prefix-cache hits. */
export const PROMPT_TOKENS_COUNTER = 'vllm:prompt_tokens';
export const CACHE_HITS_COUNTER = 'vllm:prefix_cache_hits';

export interface EngineScrape {
  readonly engine: string;
  /** The /metrics body; undefined when the engine did not answer. */
  readonly text: string | undefined;
}

export interface EngineCounters {
  readonly promptTokens: number | undefined;
  readonly cachedTokens: number | undefined;
}

export async function scrapeEngine(engine: string, baseUrl: string, timeoutMs: number): Promise<EngineScrape> {
  try {
    const response = await request(`${baseUrl}/metrics`, {
      method: 'GET',
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.body.text();
    return { engine, text: response.statusCode === 200 ? text : undefined };
  } catch {
    return { engine, text: undefined };
  }
}

export function engineCounters(text: string | undefined): EngineCounters {
  if (text === undefined) return { promptTokens: undefined, cachedTokens: undefined };
  try {
    const samples = parsePrometheusText(text);
    return {
      promptTokens: sumCounter(samples, PROMPT_TOKENS_COUNTER),
      cachedTokens: sumCounter(samples, CACHE_HITS_COUNTER),
    };
  } catch {
    return { promptTokens: undefined, cachedTokens: undefined };
  }
}

interface Family {
  help?: string;
  type?: string;
  readonly samples: string[];
}

const SAMPLE_NAME = /^[A-Za-z_:][A-Za-z0-9_:]*/;
const SUFFIXES = ['_bucket', '_sum', '_count', '_total', '_created', '_info', '_gcount', '_gsum'];

/**
 * Merges the engines' exposition texts into one, each sample labelled `prefix_router_engine="engine-i"`, each
 * metric family's HELP and TYPE once with all engines' samples together (the text format requires a family's
 * samples to be contiguous). Families named in `skip` (the router's own) are left out.
 */
export function mergeEngineMetrics(scrapes: readonly EngineScrape[], skip: ReadonlySet<string> = new Set()): string {
  const families = new Map<string, Family>();
  const familyOf = (name: string): Family => {
    let family = families.get(name);
    if (family === undefined) {
      family = { samples: [] };
      families.set(name, family);
    }
    return family;
  };
  for (const scrape of scrapes) {
    if (scrape.text === undefined) continue;
    const declared = new Set<string>();
    for (const raw of scrape.text.split(/\r?\n/)) {
      const line = raw.trim();
      if (line === '') continue;
      const comment = /^#\s*(HELP|TYPE)\s+(\S+)\s*(.*)$/.exec(line);
      if (comment !== null) {
        const [, kind, name, rest] = comment;
        declared.add(name);
        const family = familyOf(name);
        if (kind === 'HELP') family.help ??= rest;
        else family.type ??= rest;
        continue;
      }
      if (line.startsWith('#')) continue;
      const match = SAMPLE_NAME.exec(line);
      if (match === null) continue;
      const name = match[0];
      const base = declared.has(name)
        ? name
        : (SUFFIXES.map((s) => (name.endsWith(s) ? name.slice(0, -s.length) : '')).find(
            (b) => b !== '' && declared.has(b),
          ) ?? name);
      familyOf(base).samples.push(withEngineLabel(line, name, scrape.engine));
    }
  }
  let out = '';
  for (const [name, family] of families) {
    if (skip.has(name) || family.samples.length === 0) continue;
    if (family.help !== undefined) out += `# HELP ${name} ${family.help}\n`;
    if (family.type !== undefined) out += `# TYPE ${name} ${family.type}\n`;
    out += `${family.samples.join('\n')}\n`;
  }
  return out;
}

function withEngineLabel(line: string, name: string, engine: string): string {
  const label = `${ENGINE_LABEL}="${engine.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  const rest = line.slice(name.length);
  if (rest.startsWith('{')) {
    const inner = rest.slice(1).trimStart();
    return `${name}{${label}${inner.startsWith('}') ? '' : ','}${inner}`;
  }
  return `${name}{${label}}${rest}`;
}
