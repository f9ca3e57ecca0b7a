/**
 * Where p5-class capacity comes from. On-demand GPU capacity is the first thing that fails when a fleet is created,
 * scaled out or updated (an update needs new instances before old ones go): these settings make it predictable.
 */

/** An ML capacity reservation (a SageMaker training plan or flexible ML reservation) for the endpoint's instances. */
export interface CapacityReservation {
  /**
   * ARN of the reservation, e.g. `arn:aws:sagemaker:us-east-1:111122223333:ml-reservation/my-p5-block` or a
   * `training-plan/...` ARN. The endpoint launches its instances only into this reservation
   * (`CapacityReservationPreference: capacity-reservations-only`): when it is full or expired, instances fail to
   * launch instead of falling back to on-demand. Size it for the fleet plus the rolling batch (see `deployment`).
   */
  readonly mlReservationArn: string;
}

/** Limits of the capacity settings, from the SageMaker API reference. */
export const CAPACITY_LIMITS = {
  /** `InstancePools`: at most five instance types, priorities 1–5. */
  maxInstancePools: 5,
  /** `VariantInstanceProvisionTimeoutInSeconds`: 300–3600 s. */
  provisionTimeoutSeconds: { min: 300, max: 3600 },
  /** `MlReservationArn`: 20–258 characters. */
  reservationArnLength: { min: 20, max: 258 },
} as const;

/** The only `CapacityReservationPreference` SageMaker accepts. */
export const CAPACITY_RESERVATIONS_ONLY = 'capacity-reservations-only';
