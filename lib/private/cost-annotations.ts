import { Annotations, CfnOutput, Token } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';
import { InstanceType } from '../instance-type';
import { loadInstancePrices } from './router-settings';

/** Ids of the construct's info annotations (`Annotations.of(scope).acknowledgeInfo(id, reason)` hides one). */
export const HOURLY_PRICE_INFO = '@cdk-prefix-aware-llm/hourlyPrice';
export const DEFAULT_INSTANCE_TYPE_WARNING = '@cdk-prefix-aware-llm/defaultInstanceType';

/** What the endpoint bills per hour: its fleets and the instance type they are priced at. */
export interface FleetPriceInput {
  /** The instance type priced (the first pool when there are several). */
  readonly instanceType: InstanceType;
  /** Instances of one fleet: the count, or autoscaling's range. */
  readonly instances: { readonly min: number; readonly max: number };
  /** Fleets billed at once: 1 + routing variants (each is a full fleet). */
  readonly fleets: number;
  /** Whether the instance type is several pools (priced at the first). */
  readonly pooled: boolean;
}

/** A price text, `$126/hour (~$91,980/month)`, or a range. */
function priceText(usdPerHour: number, minInstances: number, maxInstances: number, hoursPerMonth: number): string {
  const usd = (v: number) => `$${v.toLocaleString('en-US', { maximumFractionDigits: v < 100 ? 2 : 0 })}`;
  if (minInstances === maxInstances)
    return `${usd(usdPerHour * minInstances)}/hour (~${usd(usdPerHour * minInstances * hoursPerMonth)}/month at ${hoursPerMonth} h)`;
  return (
    `${usd(usdPerHour * minInstances)}–${usd(usdPerHour * maxInstances)}/hour (~${usd(usdPerHour * minInstances * hoursPerMonth)}–` +
    `${usd(usdPerHour * maxInstances * hoursPerMonth)}/month at ${hoursPerMonth} h)`
  );
}

/** The fleet's size and price in one sentence, from the project's price table (router/src/common/instance-prices.ts). */
export function fleetPriceSentence(input: FleetPriceInput): string | undefined {
  const { instanceType, instances, fleets } = input;
  if (instanceType.isUnresolved || Token.isUnresolved(instances.min) || Token.isUnresolved(instances.max))
    return undefined;
  const min = instances.min * fleets;
  const max = instances.max * fleets;
  const count = min === max ? `${min}` : `${min}–${max}`;
  const fleet = `${count} × ${instanceType.name}${input.pooled ? ' (the first instance pool)' : ''}${fleets > 1 ? ` in ${fleets} variants` : ''}`;
  const prices = loadInstancePrices();
  const price = prices?.LIST_PRICE_USD_PER_HOUR[instanceType.name];
  if (prices === undefined || price === undefined) {
    const known =
      prices === undefined
        ? ''
        : ` (the built-in prices cover ${Object.keys(prices.LIST_PRICE_USD_PER_HOUR).join(', ')})`;
    return `${fleet}: no built-in price for ${instanceType.name}${known}; see https://aws.amazon.com/sagemaker/pricing/`;
  }
  return `${fleet} at $${price}/instance-hour = ${priceText(price, min, max, prices.HOURS_PER_MONTH)}; price: ${prices.LIST_PRICE_SOURCE}`;
}

/**
 * The hourly price as an info annotation on every endpoint and as a stack output (`HourlyPrice`: in the template
 * `cdk synth` prints and in the Outputs `cdk deploy` prints) — no warning by price: with aws-cdk-lib's
 * `annotationsInValidationReport` flag, which this repository's cdk.json sets, a price warning failed the examples'
 * strict synthesis — and a warning when the instance type was left to its default, ml.p5.48xlarge: the costliest choice, sized for a 70B model.
 */
export function annotateFleetPrice(scope: IConstruct, input: FleetPriceInput, instanceTypeDefaulted: boolean): void {
  const sentence = fleetPriceSentence(input);
  if (sentence === undefined) return;
  Annotations.of(scope).addInfoV2(HOURLY_PRICE_INFO, `Endpoint price: ${sentence}.`);
  new CfnOutput(scope, 'HourlyPrice', {
    description: 'What this endpoint bills while deployed (cdk-prefix-aware-llm list price table)',
    value: sentence,
  });
  if (instanceTypeDefaulted) {
    Annotations.of(scope).addWarningV2(
      DEFAULT_INSTANCE_TYPE_WARNING,
      `instanceType is not set, so the endpoint runs the default ${input.instanceType.name} (${input.instanceType.gpuCount} × ${input.instanceType.gpuModel}): ${sentence}. ` +
        'It is sized for a 70B model; set instanceType to the smallest type that holds your model (e.g. InstanceType.ML_G6E_2XLARGE, one 48 GB GPU, ' +
        'for a 7B model in BF16), or acknowledge this warning to keep the default.',
    );
    return; // that warning states the price already
  }
}
