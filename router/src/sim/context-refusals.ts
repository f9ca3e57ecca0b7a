import { contextLimitRefusal } from '../emulator/engine-model';
import type { EngineProfile } from '../emulator/engine-profile';
import { renderedPromptOf } from '../feed/workload-routing';
import { formatNumber } from '../report/format';
import { tokenCount } from '../state/block-hash';
import type { Workload } from '../workload';

/** Prompts that do not fit one context length of the fleet. */
export interface ContextRefusalCount {
  readonly maxModelLen: number;
  /** The fleet's profiles with this context, in fleet order. */
  readonly profiles: readonly string[];
  readonly refused: number;
}

/** What the engines will refuse for their context before a run sends anything (see countContextRefusals). */
export interface ContextRefusals {
  /** Prompts counted: the requests the run sends. */
  readonly prompts: number;
  /** True when the run may send fewer (a closed loop or follow-up turns cut by --duration): the counts are then at most. */
  readonly upperBound: boolean;
  /** One entry per distinct context length of the fleet, shortest first. */
  readonly byContext: readonly ContextRefusalCount[];
}

/**
 * How many of the requests a run will send the engines refuse for their context: each prompt's tokens (the
 * simulator's count: the rendered prompt at 4 characters a token) and its max_tokens, judged by the engine
 * model's own rule (`contextLimitRefusal`), against every distinct `maxModelLen` of the fleet. Counted from the
 * workload alone, so `simulate` and `plan` can say it before the run; the run's errors then equal it.
 */
export function countContextRefusals(
  workload: Workload,
  fleet: readonly EngineProfile[],
  limits: { readonly maxRequests?: number; readonly sendUntilMs?: number } = {},
): ContextRefusals {
  const contexts = [...new Set(fleet.map((p) => p.maxModelLen))].sort((a, b) => a - b);
  const refused = contexts.map(() => 0);
  const sendUntilMs = limits.sendUntilMs ?? Infinity;
  const maxRequests = limits.maxRequests ?? Infinity;
  const closed = workload.load.mode === 'closed';
  let prompts = 0;
  let followUps = false;
  for (const request of workload.requests()) {
    if (prompts >= maxRequests) break;
    // Open loop: the simulator sends what arrives before the send window ends (arrival order).
    if (!closed && request.arrivalMs >= sendUntilMs) break;
    prompts++;
    followUps ||= request.dependsOnId !== undefined;
    const promptTokens = tokenCount(renderedPromptOf(request));
    contexts.forEach((maxModelLen, i) => {
      if (contextLimitRefusal(promptTokens, request.maxTokens, maxModelLen) !== undefined) refused[i]++;
    });
  }
  return {
    prompts,
    upperBound: Number.isFinite(sendUntilMs) && (closed || followUps),
    byContext: contexts.map((maxModelLen, i) => ({
      maxModelLen,
      profiles: [...new Set(fleet.filter((p) => p.maxModelLen === maxModelLen).map((p) => p.name))],
      refused: refused[i],
    })),
  };
}

/** The one line `simulate` and `plan` print before a run. */
export function contextRefusalLine(refusals: ContextRefusals): string {
  const atMost = refusals.upperBound ? 'at most ' : '';
  const parts = refusals.byContext.map(
    (c) =>
      `${atMost}${formatNumber(c.refused)} do not fit the ${formatNumber(c.maxModelLen)}-token context of ${c.profiles.join(', ')}`,
  );
  const consequence =
    refusals.byContext.length === 1
      ? 'those are refused (HTTP 400, prompt + max_tokens over the context) on every strategy alike'
      : 'a prompt is refused (HTTP 400) on an instance whose context it does not fit';
  return `context: of ${formatNumber(refusals.prompts)} prompts, ${parts.join('; ')}: ${consequence}`;
}
