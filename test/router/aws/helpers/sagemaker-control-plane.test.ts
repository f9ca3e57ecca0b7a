import {
  CreateInferenceComponentCommand,
  DeleteInferenceComponentCommand,
  DescribeInferenceComponentCommand,
  ListInferenceComponentsCommand,
  SageMakerClient,
} from '@aws-sdk/client-sagemaker';
import { SageMakerControlPlane, type ControlPlaneOptions } from './sagemaker-control-plane';

/**
 * The control-plane fake's inference components, through the real SDK: the state machine and the API's checks the
 * tests of `ab` and `bench` rely on. A test of the test double, kept beside it (not a test of the router).
 */
const COMPONENTS: ControlPlaneOptions['inferenceComponents'] = [
  { name: 'llama-base', environment: { SM_VLLM_SERVED_MODEL_NAME: 'base' }, copies: 2 },
  { name: 'sql', base: 'llama-base' },
];

describe('when the control-plane fake hosts inference components', () => {
  let fake: SageMakerControlPlane;
  let sm: SageMakerClient;
  beforeEach(async () => {
    fake = await new SageMakerControlPlane({ inferenceComponents: COMPONENTS, pollsPerUpdate: 2 }).start();
    sm = new SageMakerClient({
      endpoint: fake.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
      maxAttempts: 1,
    });
  });
  afterEach(async () => {
    sm.destroy();
    await fake.close();
  });

  it('GIVEN CreateInferenceComponent THEN Creating for the configured polls, then InService with its copies', async () => {
    await sm.send(
      new CreateInferenceComponentCommand({
        InferenceComponentName: 'support',
        EndpointName: 'my-llm',
        VariantName: 'AllTraffic',
        Specification: { BaseInferenceComponentName: 'llama-base' },
      }),
    );
    const first = await sm.send(new DescribeInferenceComponentCommand({ InferenceComponentName: 'support' }));
    expect(first.InferenceComponentStatus).toBe('Creating');
    const second = await sm.send(new DescribeInferenceComponentCommand({ InferenceComponentName: 'support' }));
    expect(second.InferenceComponentStatus).toBe('InService');
    expect(second.Specification?.BaseInferenceComponentName).toBe('llama-base');
  });

  it.each([
    ['a name used already', { InferenceComponentName: 'sql' }, /already existing/],
    ['a name with an underscore', { InferenceComponentName: 'bad_name' }, /failed to satisfy constraint/],
    ['a 64-character name', { InferenceComponentName: 'a'.repeat(64) }, /failed to satisfy constraint/],
    ['an unknown variant', { VariantName: 'Other' }, /Could not find variant/],
    ['an unknown base', { Specification: { BaseInferenceComponentName: 'nope' } }, /base inference component/],
  ])('GIVEN %s THEN ValidationException', async (_what, override, message) => {
    const input = {
      InferenceComponentName: 'new-one',
      EndpointName: 'my-llm',
      VariantName: 'AllTraffic',
      Specification: {},
      ...override,
    };
    await expect(sm.send(new CreateInferenceComponentCommand(input))).rejects.toThrow(message);
  });

  it('GIVEN a 63-character name THEN it is created', async () => {
    await expect(
      sm.send(
        new CreateInferenceComponentCommand({
          InferenceComponentName: 'a'.repeat(63),
          EndpointName: 'my-llm',
          VariantName: 'AllTraffic',
          Specification: {},
        }),
      ),
    ).resolves.toBeDefined();
  });

  it('GIVEN more components than MaxResults THEN ListInferenceComponents pages with NextToken, filtered by endpoint', async () => {
    await sm.send(
      new CreateInferenceComponentCommand({
        InferenceComponentName: 'support',
        EndpointName: 'my-llm',
        VariantName: 'AllTraffic',
        Specification: { BaseInferenceComponentName: 'llama-base' },
      }),
    );
    const page1 = await sm.send(new ListInferenceComponentsCommand({ EndpointNameEquals: 'my-llm', MaxResults: 2 }));
    expect(page1.InferenceComponents).toHaveLength(2);
    const page2 = await sm.send(
      new ListInferenceComponentsCommand({ EndpointNameEquals: 'my-llm', MaxResults: 2, NextToken: page1.NextToken }),
    );
    expect(page2.InferenceComponents?.map((c) => c.InferenceComponentName)).toEqual(['support']);
    expect(page2.NextToken).toBeUndefined();
    expect(
      (await sm.send(new ListInferenceComponentsCommand({ EndpointNameEquals: 'other' }))).InferenceComponents,
    ).toEqual([]);
  });

  it('GIVEN DeleteInferenceComponent THEN Deleting, then gone', async () => {
    await sm.send(new DeleteInferenceComponentCommand({ InferenceComponentName: 'sql' }));
    await expect(sm.send(new DescribeInferenceComponentCommand({ InferenceComponentName: 'sql' }))).rejects.toThrow(
      /Could not find/,
    );
    expect(fake.components.has('sql')).toBe(false);
  });
});
