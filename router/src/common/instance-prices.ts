/**
 * The project's one table of SageMaker instance prices: approximate on-demand list prices (USD per instance-hour,
 * us-east-1, real-time inference) of the instance types the examples use, as recorded on LIST_PRICE_RECORDED from
 * https://aws.amazon.com/sagemaker/pricing/. `prefix-router plan` and `ab` price their runs with it, and the
 * construct library states an endpoint's hourly price at `cdk synth` from it (lib/private/router-settings.ts loads
 * this module from the compiled router the package ships). Other regions, types, savings plans and later price
 * changes differ. Pure data: no imports.
 */
export const LIST_PRICE_USD_PER_HOUR: Readonly<Record<string, number>> = {
  'ml.p5.48xlarge': 63,
  'ml.g6e.2xlarge': 2.6,
};

/** The day the prices above were read from AWS's pricing page. */
export const LIST_PRICE_RECORDED = '2026-11-30';

/** Where the prices come from, for every report and message that shows one. */
export const LIST_PRICE_SOURCE = `approximate us-east-1 on-demand list price recorded ${LIST_PRICE_RECORDED} from https://aws.amazon.com/sagemaker/pricing/; other regions, savings plans and later changes differ`;

/** Hours in a billed month: 365 × 24 ÷ 12, the figure AWS's pricing calculator uses. */
export const HOURS_PER_MONTH = 730;
