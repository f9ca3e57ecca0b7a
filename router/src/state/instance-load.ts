/**
 * The router's own view of the work on one instance, kept identically by the live router and the simulator:
 * requests in flight, prompt tokens still waiting for prefill (the prompt tokens of in-flight requests that have
 * not produced a first token, less what the policy predicted cached), and sequences decoding. A request's
 * prefill counts as done when its first token is observed. Every change goes through a LoadTicket, so the
 * counts return to zero once every request has ended, however it ended.
 */
export class InstanceLoad {
  inFlight = 0;
  queuedPrefillTokens = 0;
  decodeSequences = 0;
  /** Bumped on every change: an observer can tell whether anything changed since it last looked. */
  changes = 0;

  /** A request dispatched to the instance: `prefillTokens` = prompt tokens − predicted cached tokens (≥ 0). */
  start(prefillTokens: number): LoadTicket {
    return new LoadTicket(this, Math.max(0, Math.round(prefillTokens)));
  }
}

export class LoadTicket {
  private phase: 'prefill' | 'decode' | 'ended' = 'prefill';

  constructor(
    private readonly load: InstanceLoad,
    readonly prefillTokens: number,
  ) {
    load.inFlight++;
    load.queuedPrefillTokens += prefillTokens;
    load.changes++;
  }

  get ended(): boolean {
    return this.phase === 'ended';
  }

  /** The first token arrived: prefill done, the request now decodes. Idempotent. */
  firstToken(): void {
    if (this.phase !== 'prefill') return;
    this.phase = 'decode';
    this.load.queuedPrefillTokens -= this.prefillTokens;
    this.load.decodeSequences++;
    this.load.changes++;
  }

  /** The request ended (completed, failed or aborted). Idempotent. */
  end(): void {
    if (this.phase === 'ended') return;
    if (this.phase === 'prefill') this.load.queuedPrefillTokens -= this.prefillTokens;
    else this.load.decodeSequences--;
    this.phase = 'ended';
    this.load.inFlight--;
    this.load.changes++;
  }
}
