import { Duration, Names, Token } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';
import { PrefixAwareLlmValidationError } from './errors';

/**
 * SageMaker resource names (endpoints, inference components, production variants): 1–63 letters, digits and hyphens,
 * starting and ending with a letter or digit (API reference, `EndpointName` and `InferenceComponentName`:
 * https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateInferenceComponent.html; `VariantName`:
 * https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ProductionVariant.html).
 */
export const SAGEMAKER_NAME = /^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$/;

/** The default of a SageMaker resource name: the construct path, unique in the app, lower case, within 63 characters. */
export function nameFromPath(scope: IConstruct): string {
  return Names.uniqueResourceName(scope, { maxLength: 63, separator: '-' }).toLowerCase();
}

/** SageMaker hosting instance type names: `ml.<family>.<size>`. */
export const INSTANCE_TYPE_NAME = /^ml\.[a-z0-9-]+\.[a-z0-9]+$/;

/** A value we cannot check at synth time: a token, resolved only at deploy time. */
export function isUnresolved(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === 'string' || typeof value === 'number') return Token.isUnresolved(value);
  return Token.isUnresolved(value);
}

/** An integer we can compare at synth time (set, not a token). */
export function isKnownInteger(value: number | undefined): value is number {
  return value !== undefined && !isUnresolved(value) && Number.isInteger(value);
}

/** `'abc'` for strings, the plain number otherwise: how values appear after "(got ...)". */
export function show(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  return String(value);
}

/**
 * Collects problems instead of throwing at the first one. Checks skip `undefined` (the default applies) and
 * unresolved tokens (known only at deploy time); they never clamp or fix a value.
 */
export class ProblemCollector {
  private readonly problems: string[] = [];

  public add(problem: string): void {
    this.problems.push(problem);
  }

  public get count(): number {
    return this.problems.length;
  }

  public list(): readonly string[] {
    return [...this.problems];
  }

  /** `name must be between min and max (got value)`; non-integers are refused with the same range. */
  public integerInRange(name: string, value: number | undefined, min: number, max: number): void {
    if (value === undefined || isUnresolved(value)) return;
    if (!Number.isInteger(value)) {
      this.add(`${name} must be an integer between ${min} and ${max} (got ${show(value)})`);
    } else if (value < min || value > max) {
      this.add(`${name} must be between ${min} and ${max} (got ${value})`);
    }
  }

  /** `name must be an integer of at least min (got value)`. */
  public integerAtLeast(name: string, value: number | undefined, min: number): void {
    if (value === undefined || isUnresolved(value)) return;
    if (!Number.isInteger(value) || value < min) {
      this.add(`${name} must be an integer of at least ${min} (got ${show(value)})`);
    }
  }

  /**
   * A SageMaker resource name (`SAGEMAKER_NAME`), unless unset or a token. Returns whether it was refused, so a
   * caller can skip checks that need a valid name.
   */
  public sageMakerName(name: string, value: string | undefined): boolean {
    if (value === undefined || Token.isUnresolved(value) || SAGEMAKER_NAME.test(value)) return false;
    this.add(
      `${name} must be 1–63 letters, digits or hyphens, starting and ending with a letter or digit (got ${show(value)})`,
    );
    return true;
  }

  /** A `Duration` in whole seconds between minSeconds and maxSeconds. */
  public durationInRange(name: string, value: Duration | undefined, minSeconds: number, maxSeconds: number): void {
    if (value === undefined || value.isUnresolved()) return;
    const seconds = value.toSeconds({ integral: false });
    if (!Number.isInteger(seconds)) {
      this.add(`${name} must be a whole number of seconds between ${minSeconds} and ${maxSeconds} (got ${seconds} s)`);
    } else if (seconds < minSeconds || seconds > maxSeconds) {
      this.add(`${name} must be between ${minSeconds} and ${maxSeconds} seconds (got ${seconds})`);
    }
  }

  /** Throws every collected problem at once, if there is any. */
  public throwIfAny(scope: IConstruct): void {
    if (this.problems.length > 0) throw new PrefixAwareLlmValidationError(scope, this.problems);
  }
}

/** Whole seconds of a duration known to be valid, or undefined when unset; tokens pass through. */
export function wholeSeconds(value: Duration | undefined): number | undefined {
  if (value === undefined) return undefined;
  return value.toSeconds();
}
