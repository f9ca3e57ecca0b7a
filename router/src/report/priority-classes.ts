/**
 * TTFT by priority class: a report's `strategies[].byPriority["N"]`, for workloads whose requests carry vLLM's
 * `priority` (a trace line's `"priority": N`). Each class has the strategy's own fields for its requests: counts,
 * the TTFT distribution and CDF, the engine-reported cache hit rate. Absent when no request had a class.
 */
import type { RequestRecord } from './request-record';
import { cdfPointsOfSorted, distribution, sortedAscending, type CdfPoint, type Distribution } from './stats';

export interface PriorityClassSummary {
  readonly requests: number;
  readonly succeeded: number;
  readonly errors: number;
  readonly ttftMs: Distribution;
  /** Σ cached_tokens ÷ Σ prompt_tokens over the class's successful requests; null when unreported. */
  readonly cacheHitRate: number | null;
  readonly ttftCdf: readonly CdfPoint[];
}

/** Classes keyed by the priority as text, in ascending priority (most urgent first); undefined when none. */
export function byPriorityOf(
  sentInWindow: readonly RequestRecord[],
  cdfPointCount: number,
): Readonly<Record<string, PriorityClassSummary>> | undefined {
  const classes = new Map<number, RequestRecord[]>();
  for (const r of sentInWindow) {
    if (r.priority === undefined) continue;
    let members = classes.get(r.priority);
    if (members === undefined) classes.set(r.priority, (members = []));
    members.push(r);
  }
  if (classes.size === 0) return undefined;
  const summaries: Record<string, PriorityClassSummary> = {};
  for (const priority of [...classes.keys()].sort((a, b) => a - b))
    summaries[String(priority)] = summarizeClass(classes.get(priority)!, cdfPointCount);
  return summaries;
}

function summarizeClass(records: readonly RequestRecord[], cdfPointCount: number): PriorityClassSummary {
  const ok = records.filter((r) => r.error === undefined);
  const ttft = sortedAscending(ok.flatMap((r) => (r.ttftMs === null ? [] : [r.ttftMs])));
  let prompt = 0;
  let cached = 0;
  let usageSeen = false;
  for (const r of ok) {
    if (r.promptTokens === undefined) continue;
    usageSeen = true;
    prompt += r.promptTokens;
    cached += r.cachedPromptTokens ?? 0;
  }
  return {
    requests: records.length,
    succeeded: ok.length,
    errors: records.length - ok.length,
    ttftMs: distribution(ttft),
    cacheHitRate: usageSeen && prompt > 0 ? cached / prompt : null,
    ttftCdf: cdfPointsOfSorted(ttft, cdfPointCount),
  };
}
