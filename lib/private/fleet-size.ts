/**
 * The instance counts an update may meet: the initial count, and with autoscaling every count from `minCapacity` to
 * `maxCapacity` (SageMaker checks a rolling batch against the variant's current instance count).
 */
export interface FleetSize {
  readonly instanceCount: number;
  readonly minCapacity?: number;
  readonly maxCapacity?: number;
}
