import { DLC_ACCOUNT_BY_REGION, dlcAccountFor } from '../../lib/private/dlc-accounts';
import { problemsFor, synth } from './helpers';

/**
 * The "Deep Learning Containers" table of https://aws.github.io/deep-learning-containers/reference/region_availability/
 * (aws/deep-learning-containers docs/reference/region_availability.md), as published on 2026-11-30, row by row:
 * region name | code | account id. When AWS adds a region, update this table from the page and the map with it.
 */
const DLC_DOCS_TABLE = `
US East (Ohio) | us-east-2 | 763104351884
US East (N. Virginia) | us-east-1 | 763104351884
US West (N. California) | us-west-1 | 763104351884
US West (Oregon) | us-west-2 | 763104351884
Africa (Cape Town) | af-south-1 | 626614931356
Asia Pacific (Hong Kong) | ap-east-1 | 871362719292
Asia Pacific (Hyderabad) | ap-south-2 | 772153158452
Asia Pacific (Jakarta) | ap-southeast-3 | 907027046896
Asia Pacific (Malaysia) | ap-southeast-5 | 550225433462
Asia Pacific (Melbourne) | ap-southeast-4 | 457447274322
Asia Pacific (Mumbai) | ap-south-1 | 763104351884
Asia Pacific (New Zealand) | ap-southeast-6 | 633930458069
Asia Pacific (Osaka) | ap-northeast-3 | 364406365360
Asia Pacific (Seoul) | ap-northeast-2 | 763104351884
Asia Pacific (Singapore) | ap-southeast-1 | 763104351884
Asia Pacific (Sydney) | ap-southeast-2 | 763104351884
Asia Pacific (Taipei) | ap-east-2 | 975050140332
Asia Pacific (Thailand) | ap-southeast-7 | 590183813437
Asia Pacific (Tokyo) | ap-northeast-1 | 763104351884
Canada (Calgary) | ca-west-1 | 204538143572
Canada (Central) | ca-central-1 | 763104351884
EU (Frankfurt) | eu-central-1 | 763104351884
EU (Ireland) | eu-west-1 | 763104351884
EU (London) | eu-west-2 | 763104351884
EU (Milan) | eu-south-1 | 692866216735
EU (Paris) | eu-west-3 | 763104351884
EU (Spain) | eu-south-2 | 503227376785
EU (Stockholm) | eu-north-1 | 763104351884
EU (Zurich) | eu-central-2 | 380420809688
Israel (Tel Aviv) | il-central-1 | 780543022126
Mexico (Central) | mx-central-1 | 637423239942
Middle East (Bahrain) | me-south-1 | 217643126080
Middle East (Saudi Arabia) | me-west-1 | 124382933778
Middle East (UAE) | me-central-1 | 914824155844
South America (Sao Paulo) | sa-east-1 | 763104351884
China (Beijing) | cn-north-1 | 727897471807
China (Ningxia) | cn-northwest-1 | 727897471807
`;

function documentedAccounts(): Record<string, string> {
  return Object.fromEntries(
    DLC_DOCS_TABLE.trim()
      .split('\n')
      .map((row) => {
        const [, code, account] = row.split('|').map((cell) => cell.trim());
        return [code, account];
      }),
  );
}

describe('when the DLC registry map is compared with the AWS documentation', () => {
  test('GIVEN the documented table WHEN compared THEN the map has exactly its regions and accounts', () => {
    expect({ ...DLC_ACCOUNT_BY_REGION }).toEqual(documentedAccounts());
  });

  test('GIVEN the table WHEN parsed THEN every row has a region code and a 12-digit account', () => {
    for (const [code, account] of Object.entries(documentedAccounts())) {
      expect(code).toMatch(/^[a-z]{2}(-[a-z]+)+-\d$/);
      expect(account).toMatch(/^\d{12}$/);
    }
  });

  test('GIVEN an unknown region or an inherited property name WHEN looked up THEN there is no account', () => {
    expect(dlcAccountFor('xx-nowhere-1')).toBeUndefined();
    expect(dlcAccountFor('toString')).toBeUndefined();
  });
});

describe('when a stack is in me-west-1', () => {
  test('GIVEN an explicit me-west-1 stack WHEN synthesized THEN the image comes from the me-west-1 DLC registry', () => {
    const { template } = synth({}, { env: { region: 'me-west-1', account: '111122223333' } });
    const image = Object.values(template.findResources('AWS::SageMaker::Model'))[0].Properties.PrimaryContainer.Image;
    expect(JSON.stringify(image)).toContain('124382933778.dkr.ecr.me-west-1.');
  });

  test('GIVEN a region without a DLC registry WHEN built THEN synth fails naming the region', () => {
    expect(problemsFor({}, { env: { region: 'xx-nowhere-1', account: '111122223333' } }).join('\n')).toContain(
      'region xx-nowhere-1',
    );
  });
});
