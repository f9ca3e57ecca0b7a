/**
 * The one error the construct library throws for bad props: every problem found in one construct, listed
 * together, so a user fixes them all in one round instead of one synth per mistake.
 */
export class PrefixAwareLlmValidationError extends Error {
  /** Each problem as one sentence: prop, allowed range, value received. */
  public readonly problems: readonly string[];

  constructor(constructPath: string, problems: readonly string[]) {
    const count = problems.length === 1 ? '1 invalid setting' : `${problems.length} invalid settings`;
    super(`${constructPath} has ${count}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'PrefixAwareLlmValidationError';
    this.problems = [...problems];
    Object.setPrototypeOf(this, new.target.prototype);
  }
}
