import { ValidationError } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';

/** aws-cdk-lib brands error names as literal strings; ours is one. */
type ErrorName = ConstructorParameters<typeof ValidationError>[0];
const NAME = 'PrefixAwareLlmValidationError' as ErrorName;

/**
 * The one error the construct library throws for bad props: every problem found in one construct, listed
 * together, so a user fixes them all in one round instead of one synth per mistake. It is aws-cdk-lib's
 * `ValidationError` (`Errors.isValidationError(e)` is true), attached to the construct that reported it.
 *
 * `@internal` like aws-cdk-lib's own `ValidationError`: jsii languages cannot subclass JavaScript's `Error`, so
 * there they see the message only; TypeScript and JavaScript code still catches it by class and reads `problems`.
 *
 * @internal
 */
export class PrefixAwareLlmValidationError extends ValidationError {
  /** Each problem as one sentence: prop, allowed range, value received. */
  public readonly problems: readonly string[];

  constructor(scope: IConstruct, problems: readonly string[]) {
    const count = problems.length === 1 ? '1 invalid setting' : `${problems.length} invalid settings`;
    super(NAME, `${scope.node.path} has ${count}:\n${problems.map((p) => `  - ${p}`).join('\n')}`, scope);
    this.problems = [...problems];
    Object.setPrototypeOf(this, new.target.prototype);
  }
}
