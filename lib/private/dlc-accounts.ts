/**
 * The ECR registry account of AWS Deep Learning Containers (vLLM DLC and LMI/djl-inference images) per region.
 *
 * Source: aws/deep-learning-containers `docs/reference/region_availability.md`, published at
 * https://aws.github.io/deep-learning-containers/reference/region_availability/ (checked 2026-11-30; the test
 * `test/lib/dlc-accounts.test.ts` pins this map to that table row by row). Most regions
 * share 763104351884; opt-in regions and China have their own registry. We ship our own copy so that
 * synthesizing never calls AWS; a region missing here is reported at synth time when the stack's region is
 * known, and by CloudFormation (no mapping entry) when the stack is environment-agnostic.
 */
export const DLC_ACCOUNT_BY_REGION: Readonly<Record<string, string>> = Object.freeze({
  'us-east-1': '763104351884',
  'us-east-2': '763104351884',
  'us-west-1': '763104351884',
  'us-west-2': '763104351884',
  'ca-central-1': '763104351884',
  'ca-west-1': '204538143572',
  'mx-central-1': '637423239942',
  'sa-east-1': '763104351884',
  'eu-central-1': '763104351884',
  'eu-central-2': '380420809688',
  'eu-north-1': '763104351884',
  'eu-south-1': '692866216735',
  'eu-south-2': '503227376785',
  'eu-west-1': '763104351884',
  'eu-west-2': '763104351884',
  'eu-west-3': '763104351884',
  'il-central-1': '780543022126',
  'me-central-1': '914824155844',
  'me-south-1': '217643126080',
  'me-west-1': '124382933778',
  'af-south-1': '626614931356',
  'ap-east-1': '871362719292',
  'ap-east-2': '975050140332',
  'ap-northeast-1': '763104351884',
  'ap-northeast-2': '763104351884',
  'ap-northeast-3': '364406365360',
  'ap-south-1': '763104351884',
  'ap-south-2': '772153158452',
  'ap-southeast-1': '763104351884',
  'ap-southeast-2': '763104351884',
  'ap-southeast-3': '907027046896',
  'ap-southeast-4': '457447274322',
  'ap-southeast-5': '550225433462',
  'ap-southeast-6': '633930458069',
  'ap-southeast-7': '590183813437',
  'cn-north-1': '727897471807',
  'cn-northwest-1': '727897471807',
});

/** The registry account for a concrete region, or undefined when we do not know the region. */
export function dlcAccountFor(region: string): string | undefined {
  return Object.prototype.hasOwnProperty.call(DLC_ACCOUNT_BY_REGION, region)
    ? DLC_ACCOUNT_BY_REGION[region]
    : undefined;
}
