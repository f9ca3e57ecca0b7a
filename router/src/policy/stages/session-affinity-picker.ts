import type { RoutingRequest } from '../../protocol/routing-request';
import type { RoutingDecision } from '../routing-policy';
import { costDecision, minCostOf, type CostCandidate, type PromptFacts } from './predicted-cost-candidates';
import type { Picker } from './stage';

/**
 * A request carrying the session header goes to its session's instance unless that one is not a candidate
 * (unhealthy, not serving the model) or overloaded: following it costs more than recomputing the whole prompt on
 * the cheapest candidate. Remembers the last `maxSessions` sessions (least recently used forgotten first); an
 * empty header name turns it off.
 */
export class SessionAffinityPicker<Reason extends string> implements Picker<CostCandidate, Reason, PromptFacts> {
  readonly kind = 'picker';
  readonly name = 'session-affinity';
  private readonly sessions = new Map<string, string>();

  constructor(
    private readonly header: string,
    private readonly maxSessions: number,
    private readonly reason: Reason,
  ) {}

  pick(candidates: readonly CostCandidate[], _scores: Float64Array, prompt: PromptFacts) {
    if (this.header === '') return undefined;
    const session = sessionOf(prompt.request, this.header);
    const pinned = session === undefined ? undefined : this.sessions.get(session);
    if (pinned === undefined) return undefined;
    const c = candidates.find((x) => x.view.id === pinned);
    return c !== undefined && c.cost <= minCostOf(candidates) + prompt.promptTokens
      ? costDecision(c, this.reason)
      : undefined;
  }

  commit(request: RoutingRequest, decision: RoutingDecision): void {
    if (this.header === '') return;
    const session = sessionOf(request, this.header);
    if (session === undefined) return;
    this.sessions.delete(session);
    this.sessions.set(session, decision.instance);
    if (this.sessions.size > this.maxSessions) this.sessions.delete(this.sessions.keys().next().value as string);
  }
}

function sessionOf(request: RoutingRequest, header: string): string | undefined {
  const value = request.headers?.[header];
  const v = Array.isArray(value) ? value[0] : value;
  return v === undefined || v === '' ? undefined : v;
}
