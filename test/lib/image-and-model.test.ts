import { aws_ecr as ecr, aws_kms as kms, aws_s3 as s3, aws_secretsmanager as secretsmanager, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import {
  EngineEnvConvention,
  InferenceAmiVersion,
  ModelSource,
  PrefixAwareLlmEndpoint,
  S3ModelOptions,
  VllmImage,
} from '../../lib/index';
import { DLC_ACCOUNT_BY_REGION } from '../../lib/private/dlc-accounts';
import {
  actionsOf,
  baseProps,
  build,
  environmentOf,
  newApp,
  newStack,
  onlyResource,
  policyStatements,
  problemsFor,
  problemsOf,
  synth,
  variantOf,
  warningsOf,
} from './helpers';

function imageOf(template: Template): unknown {
  return onlyResource(template, 'AWS::SageMaker::Model').PrimaryContainer.Image;
}

describe('when the default DLC image is used in an environment-agnostic stack', () => {
  const { template } = synth();

  test('GIVEN no region WHEN synthesized THEN the registry account comes from a mapping keyed by AWS::Region', () => {
    expect(imageOf(template)).toEqual({
      'Fn::Join': [
        '',
        [
          { 'Fn::FindInMap': ['PrefixAwareLlmDlcAccounts', { Ref: 'AWS::Region' }, 'account'] },
          '.dkr.ecr.',
          { Ref: 'AWS::Region' },
          '.',
          { Ref: 'AWS::URLSuffix' },
          '/vllm:server-sagemaker-cuda-v2.3',
        ],
      ],
    });
  });

  test('GIVEN no region WHEN synthesized THEN the mapping holds every region of our map', () => {
    const mapping = template.toJSON().Mappings.PrefixAwareLlmDlcAccounts;
    expect(Object.keys(mapping).sort()).toEqual(Object.keys(DLC_ACCOUNT_BY_REGION).sort());
    expect(mapping['us-east-1']).toEqual({ account: '763104351884' });
    expect(mapping['ap-east-1']).toEqual({ account: '871362719292' });
    expect(mapping['cn-north-1']).toEqual({ account: '727897471807' });
  });

  test('GIVEN the DLC WHEN synthesized THEN the role may pull from exactly the vllm repository of that registry', () => {
    const pull = policyStatements(template).find((s) => actionsOf(s).includes('ecr:BatchGetImage'))!;
    expect(actionsOf(pull)).toEqual([
      'ecr:BatchCheckLayerAvailability',
      'ecr:GetDownloadUrlForLayer',
      'ecr:BatchGetImage',
    ]);
    expect(pull.Resource).toEqual({
      'Fn::Join': [
        '',
        [
          'arn:',
          { Ref: 'AWS::Partition' },
          ':ecr:',
          { Ref: 'AWS::Region' },
          ':',
          { 'Fn::FindInMap': ['PrefixAwareLlmDlcAccounts', { Ref: 'AWS::Region' }, 'account'] },
          ':repository/vllm',
        ],
      ],
    });
  });

  test('GIVEN the DLC WHEN synthesized THEN GetAuthorizationToken has resource * (the only one ECR accepts) and nothing else does', () => {
    const star = policyStatements(template).filter((s) => s.Resource === '*');
    expect(star.map((s) => actionsOf(s)).sort()).toEqual([['cloudwatch:PutMetricData'], ['ecr:GetAuthorizationToken']]);
  });
});

describe('when the stack has a concrete region', () => {
  test('GIVEN us-west-2 WHEN synthesized THEN the account is a literal and no mapping is rendered', () => {
    const { template } = synth({}, { env: { region: 'us-west-2' } });
    expect(JSON.stringify(imageOf(template))).toContain('763104351884.dkr.ecr.us-west-2.');
    expect(template.toJSON().Mappings).toBeUndefined();
  });

  test('GIVEN an opt-in region (eu-south-1) WHEN synthesized THEN its own registry account is used', () => {
    const { template } = synth({}, { env: { region: 'eu-south-1' } });
    expect(JSON.stringify(imageOf(template))).toContain('692866216735.dkr.ecr.eu-south-1.');
  });

  test('GIVEN a region missing from the map WHEN built THEN it is refused with the way out', () => {
    expect(problemsFor({}, { env: { region: 'xx-nowhere-1' } })).toEqual([
      "image: no AWS Deep Learning Containers registry is known for region xx-nowhere-1; use VllmImage.fromEcrRepository() with a copy of the image (got region 'xx-nowhere-1')",
    ]);
  });

  test('GIVEN two endpoints in one environment-agnostic stack WHEN synthesized THEN they share one mapping', () => {
    const stack = newStack();
    new PrefixAwareLlmEndpoint(stack, 'A', baseProps());
    new PrefixAwareLlmEndpoint(stack, 'B', baseProps());
    expect(Object.keys(Template.fromStack(stack).toJSON().Mappings)).toEqual(['PrefixAwareLlmDlcAccounts']);
  });
});

describe('when a DLC tag is chosen', () => {
  test('GIVEN a v1 tag WHEN synthesized THEN the CUDA 12 AMI is selected', () => {
    const { template } = synth({ image: VllmImage.dlc({ tag: 'server-sagemaker-cuda-v1.4' }) });
    expect(variantOf(template).InferenceAmiVersion).toBe(InferenceAmiVersion.AL2_GPU_3_1);
  });

  test('GIVEN an Ubuntu-style tag WHEN synthesized THEN no AMI is forced', () => {
    const { template } = synth({ image: VllmImage.dlc({ tag: '0.13-gpu-py312' }) });
    expect(variantOf(template).InferenceAmiVersion).toBeUndefined();
  });

  test('GIVEN an explicit AMI WHEN synthesized THEN it wins over the tag', () => {
    const { template } = synth({
      image: VllmImage.dlc({ tag: 'server-sagemaker-cuda-v1.4', inferenceAmiVersion: InferenceAmiVersion.AL2_GPU_2_1 }),
    });
    expect(variantOf(template).InferenceAmiVersion).toBe('al2-ami-sagemaker-inference-gpu-2-1');
  });

  test('GIVEN a tag with a space WHEN built THEN it is refused', () => {
    expect(problemsFor({ image: VllmImage.dlc({ tag: 'v2 latest' }) })).toEqual([
      "image.tag must be a valid image tag (letters, digits, '_', '.', '-'; at most 128) (got 'v2 latest')",
    ]);
  });
});

describe('when LMI is chosen', () => {
  test('GIVEN VllmImage.lmi() WHEN synthesized THEN djl-inference renders with OPTION_* settings and the CUDA 13 AMI', () => {
    const { template } = synth({ image: VllmImage.lmi(), engine: { maxModelLen: 32768 } });
    expect(JSON.stringify(imageOf(template))).toContain('/djl-inference:0.36.0-lmi28.0.0-cu130');
    expect(variantOf(template).InferenceAmiVersion).toBe(InferenceAmiVersion.AL2023_GPU_4_1);
    expect(environmentOf(template)).toMatchObject({
      HF_MODEL_ID: 'meta-llama/Llama-3.1-70B-Instruct',
      OPTION_TENSOR_PARALLEL_DEGREE: '8',
      OPTION_MAX_MODEL_LEN: '32768',
      OPTION_ENABLE_PREFIX_CACHING: 'true',
    });
    const pull = policyStatements(template).find((s) => actionsOf(s).includes('ecr:BatchGetImage'))!;
    expect(JSON.stringify(pull.Resource)).toContain(':repository/djl-inference');
  });
});

describe('when an own ECR repository is used', () => {
  test('GIVEN fromEcrRepository WHEN synthesized THEN the image is that repository and the role may pull from it only', () => {
    const stack = newStack();
    const repository = new ecr.Repository(stack, 'Repo');
    new PrefixAwareLlmEndpoint(stack, 'Llm', baseProps({ image: VllmImage.fromEcrRepository(repository, 'v7') }));
    const template = Template.fromStack(stack);
    expect(JSON.stringify(imageOf(template))).toContain(':v7');
    const pull = policyStatements(template).find((s) => actionsOf(s).includes('ecr:BatchGetImage'))!;
    expect(pull.Resource).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^Repo/), 'Arn'] });
    expect(variantOf(template).InferenceAmiVersion).toBeUndefined();
    expect(environmentOf(template).SM_VLLM_MODEL).toBeDefined();
  });

  test('GIVEN an LMI convention for an own image WHEN synthesized THEN OPTION_* variables render', () => {
    const stack = newStack();
    const repository = ecr.Repository.fromRepositoryName(stack, 'Repo', 'my-lmi');
    new PrefixAwareLlmEndpoint(
      stack,
      'Llm',
      baseProps({
        image: VllmImage.fromEcrRepository(repository, 'v1', {
          convention: EngineEnvConvention.LMI,
          inferenceAmiVersion: InferenceAmiVersion.AL2023_GPU_4_1,
        }),
      }),
    );
    const template = Template.fromStack(stack);
    expect(environmentOf(template).OPTION_TENSOR_PARALLEL_DEGREE).toBe('8');
    expect(variantOf(template).InferenceAmiVersion).toBe('al2023-ami-sagemaker-inference-gpu-4-1');
  });
});

describe('when the model comes from Hugging Face with a token', () => {
  test('GIVEN a token secret WHEN synthesized THEN HF_TOKEN is a dynamic reference, the role gets no secret access, and a warning explains it', () => {
    const stack = newStack();
    const secret = new secretsmanager.Secret(stack, 'HfToken');
    new PrefixAwareLlmEndpoint(
      stack,
      'Llm',
      baseProps({ model: ModelSource.huggingFace('meta-llama/Llama-3.1-70B-Instruct', { tokenSecret: secret }) }),
    );
    const template = Template.fromStack(stack);
    const token = JSON.stringify(environmentOf(template).HF_TOKEN);
    expect(token).toContain('{{resolve:secretsmanager:');
    expect(token).toContain(':SecretString:::}}');
    expect(
      policyStatements(template)
        .flatMap(actionsOf)
        .filter((a) => a.startsWith('secretsmanager:')),
    ).toEqual([]);
    expect(warningsOf(stack).join('\n')).toContain('readable by anyone allowed sagemaker:DescribeModel');
  });

  test('GIVEN a JSON secret field and a revision WHEN synthesized THEN the reference selects the field and the revision pins the model', () => {
    const stack = newStack();
    const secret = secretsmanager.Secret.fromSecretNameV2(stack, 'HfToken', 'hf');
    new PrefixAwareLlmEndpoint(
      stack,
      'Llm',
      baseProps({
        model: ModelSource.huggingFace('meta-llama/Llama-3.1-70B-Instruct', {
          tokenSecret: secret,
          tokenSecretField: 'HF_TOKEN',
          revision: '33101ce6',
        }),
      }),
    );
    const env = environmentOf(Template.fromStack(stack));
    expect(JSON.stringify(env.HF_TOKEN)).toContain(':SecretString:HF_TOKEN::}}');
    expect(env.SM_VLLM_REVISION).toBe('33101ce6');
  });

  test('GIVEN a token field without a secret WHEN built THEN it is refused', () => {
    expect(problemsFor({ model: ModelSource.huggingFace('org/model', { tokenSecretField: 'HF_TOKEN' }) })).toEqual([
      "model.tokenSecretField needs model.tokenSecret (got tokenSecretField 'HF_TOKEN' without a secret)",
    ]);
  });

  test('GIVEN an empty revision WHEN built THEN it is refused', () => {
    expect(problemsFor({ model: ModelSource.huggingFace('org/model', { revision: '' }) })).toEqual([
      "model.revision must not be empty (got '')",
    ]);
  });
});

describe('when the Hugging Face model id is checked', () => {
  test('GIVEN an empty id WHEN built THEN it is refused', () => {
    expect(problemsFor({ model: ModelSource.huggingFace('') })).toEqual(["model.modelId must not be empty (got '')"]);
  });

  test('GIVEN a URL instead of an id WHEN built THEN it is refused', () => {
    expect(problemsFor({ model: ModelSource.huggingFace('https://huggingface.co/meta-llama/Llama-3.1-8B') })).toEqual([
      "model.modelId must be a Hugging Face repository id like 'organization/model-name' (got 'https://huggingface.co/meta-llama/Llama-3.1-8B')",
    ]);
  });

  test('GIVEN an id without organization WHEN synthesized THEN it is accepted', () => {
    expect(environmentOf(synth({ model: ModelSource.huggingFace('gpt2') }).template).SM_VLLM_MODEL).toBe('gpt2');
  });

  test('GIVEN a Hugging Face model with network isolation WHEN built THEN it is refused: the container could not download it', () => {
    expect(problemsFor({ enableNetworkIsolation: true })).toEqual([
      'model: a Hugging Face model cannot be downloaded with enableNetworkIsolation: true (the container has no network); ' +
        'stage the weights in S3 and use ModelSource.s3() (got ModelSource.huggingFace with network isolation)',
    ]);
  });
});

describe('when the model comes from S3', () => {
  function s3Endpoint(prefix: string, encryptionKey = false) {
    const stack = newStack();
    const key = encryptionKey ? new kms.Key(stack, 'BucketKey', { enableKeyRotation: true }) : undefined;
    const bucket = key
      ? s3.Bucket.fromBucketAttributes(stack, 'Models', { bucketName: 'my-models', encryptionKey: key })
      : s3.Bucket.fromBucketName(stack, 'Models', 'my-models');
    new PrefixAwareLlmEndpoint(
      stack,
      'Llm',
      baseProps({ model: ModelSource.s3(bucket, prefix, { s3ManagedEncryption: !key }), enableNetworkIsolation: true }),
    );
    return { stack, template: Template.fromStack(stack) };
  }

  test('GIVEN a prefix WHEN synthesized THEN an uncompressed S3Prefix data source ending in / is mounted and isolation renders', () => {
    const { template } = s3Endpoint('models/llama-3.1-70b');
    const model = onlyResource(template, 'AWS::SageMaker::Model');
    expect(model.PrimaryContainer.ModelDataSource).toEqual({
      S3DataSource: { S3Uri: 's3://my-models/models/llama-3.1-70b/', S3DataType: 'S3Prefix', CompressionType: 'None' },
    });
    expect(model.PrimaryContainer.ModelDataUrl).toBeUndefined();
    expect(model.EnableNetworkIsolation).toBe(true);
    expect(environmentOf(template).SM_VLLM_MODEL).toBe('/opt/ml/model');
  });

  test('GIVEN a prefix with a trailing slash WHEN synthesized THEN the URI has exactly one slash at the end', () => {
    const model = onlyResource(s3Endpoint('models/llama/').template, 'AWS::SageMaker::Model');
    expect(model.PrimaryContainer.ModelDataSource.S3DataSource.S3Uri).toBe('s3://my-models/models/llama/');
  });

  test('GIVEN a prefix WHEN synthesized THEN the role may read objects under it and list only it', () => {
    const statements = policyStatements(s3Endpoint('models/llama').template);
    const read = statements.find((s) => actionsOf(s).includes('s3:GetObject'))!;
    expect(actionsOf(read)).toEqual(['s3:GetObject']);
    expect(read.Resource).toEqual({
      'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::my-models/models/llama/*']],
    });
    const list = statements.find((s) => actionsOf(s).includes('s3:ListBucket'))!;
    expect(list.Resource).toEqual({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':s3:::my-models']] });
    expect(list.Condition).toEqual({ StringLike: { 's3:prefix': ['models/llama/*'] } });
  });

  test('GIVEN a bucket with a KMS key WHEN synthesized THEN the role may decrypt with that key', () => {
    const { template } = s3Endpoint('models/llama', true);
    const decrypt = policyStatements(template).find((s) => actionsOf(s).includes('kms:Decrypt'))!;
    expect(decrypt.Resource).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^BucketKey/), 'Arn'] });
  });

  test('GIVEN a leading slash WHEN built THEN it is refused', () => {
    const stack = newStack();
    const bucket = s3.Bucket.fromBucketName(stack, 'Models', 'my-models');
    expect(problemsFor({ model: ModelSource.s3(bucket, '/models/llama', { s3ManagedEncryption: true }) })).toEqual([
      "model.prefix must not start with '/' (got '/models/llama')",
    ]);
  });

  test('GIVEN an empty prefix WHEN built THEN the bucket root is refused', () => {
    const bucket = s3.Bucket.fromBucketName(new Stack(newApp(), 'Other'), 'Models', 'my-models');
    expect(problemsFor({ model: ModelSource.s3(bucket, '', { s3ManagedEncryption: true }) })).toEqual([
      "model.prefix must name a folder of model files, not the bucket root (got '')",
    ]);
  });
});

describe('when the S3 bucket is imported and its encryption must be declared', () => {
  function s3Problems(options: S3ModelOptions, owned = false): readonly string[] {
    const stack = newStack();
    const bucket = owned ? new s3.Bucket(stack, 'Models') : s3.Bucket.fromBucketName(stack, 'Models', 'my-models');
    return problemsOf(
      () =>
        new PrefixAwareLlmEndpoint(stack, 'Llm', baseProps({ model: ModelSource.s3(bucket, 'models/llama', options) })),
    );
  }

  test('GIVEN an imported bucket without encryptionKey or s3ManagedEncryption WHEN built THEN synth fails saying what to pass', () => {
    expect(s3Problems({})).toEqual([
      "model: the bucket 'TestStack/Models' is imported, so its encryption is unknown and an SSE-KMS bucket " +
        'would get no decrypt grant; pass ModelSource.s3(bucket, prefix, { encryptionKey }) for SSE-KMS or { s3ManagedEncryption: true } ' +
        'for SSE-S3 (got neither)',
    ]);
  });

  test('GIVEN both encryptionKey and s3ManagedEncryption WHEN built THEN they are refused together', () => {
    const stack = newStack();
    const key = kms.Key.fromKeyArn(
      stack,
      'K',
      'arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab',
    );
    const bucket = s3.Bucket.fromBucketName(stack, 'Models', 'my-models');
    expect(
      problemsOf(
        () =>
          new PrefixAwareLlmEndpoint(
            stack,
            'Llm',
            baseProps({
              model: ModelSource.s3(bucket, 'models/llama', { encryptionKey: key, s3ManagedEncryption: true }),
            }),
          ),
      ),
    ).toEqual([
      'model: encryptionKey and s3ManagedEncryption exclude each other; pass the key for SSE-KMS, or s3ManagedEncryption: true for SSE-S3 (got both)',
    ]);
  });

  test('GIVEN a bucket created in the app WHEN built THEN no declaration is needed', () => {
    expect(s3Problems({}, true)).toEqual([]);
  });

  test('GIVEN an imported bucket with its KMS key as a prop WHEN built THEN the role may decrypt with exactly that key', () => {
    const stack = newStack();
    const key = kms.Key.fromKeyArn(
      stack,
      'K',
      'arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab',
    );
    const bucket = s3.Bucket.fromBucketName(stack, 'Models', 'my-models');
    new PrefixAwareLlmEndpoint(
      stack,
      'Llm',
      baseProps({ model: ModelSource.s3(bucket, 'models/llama', { encryptionKey: key }) }),
    );
    const decrypt = policyStatements(Template.fromStack(stack)).find((st) => actionsOf(st).includes('kms:Decrypt'))!;
    expect(decrypt.Resource).toBe('arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab');
  });
});

describe('when the host AMI follows the CUDA version of the image', () => {
  function amiOf(image: VllmImage): unknown {
    const { stack, endpoint } = build({ image });
    return (stack.resolve(endpoint.cfnEndpointConfig.productionVariants) as Array<Record<string, unknown>>)[0]
      .inferenceAmiVersion;
  }

  test.each([
    ['0.36.0-lmi28.0.0-cu130', InferenceAmiVersion.AL2023_GPU_4_1],
    ['0.36.0-lmi28.0.0-cu130-v1.1', InferenceAmiVersion.AL2023_GPU_4_1],
    ['0.36.0-lmi20.0.0-cu128-v1.0', InferenceAmiVersion.AL2_GPU_3_1],
    ['0.36.0-lmi18.0.0-cu128', InferenceAmiVersion.AL2_GPU_3_1],
    ['latest', undefined],
  ])('GIVEN LMI tag %s WHEN built THEN the AMI is %s', (tag, ami) => {
    expect(amiOf(VllmImage.lmi({ tag }))).toBe(ami);
  });

  test('GIVEN the default DLC (v2.3, CUDA 13) WHEN built THEN the CUDA 13 AMI is selected', () => {
    expect(amiOf(VllmImage.dlc())).toBe(InferenceAmiVersion.AL2023_GPU_4_1);
  });

  test('GIVEN an own image with cudaVersion 13 WHEN built THEN the CUDA 13 AMI is selected and nothing is warned', () => {
    const stack = newStack();
    const repository = ecr.Repository.fromRepositoryName(stack, 'Repo', 'my-vllm');
    const endpoint = new PrefixAwareLlmEndpoint(
      stack,
      'Llm',
      baseProps({ image: VllmImage.fromEcrRepository(repository, 'build-42', { cudaVersion: 13 }) }),
    );
    expect((stack.resolve(endpoint.cfnEndpointConfig.productionVariants) as any[])[0].inferenceAmiVersion).toBe(
      InferenceAmiVersion.AL2023_GPU_4_1,
    );
    expect(warningsOf(stack)).toEqual([]);
  });

  test('GIVEN an own image whose tag is a DLC v2 tag WHEN built THEN the CUDA 13 AMI is read from the tag', () => {
    const stack = newStack();
    const repository = ecr.Repository.fromRepositoryName(stack, 'Repo', 'my-vllm');
    const endpoint = new PrefixAwareLlmEndpoint(
      stack,
      'Llm',
      baseProps({ image: VllmImage.fromEcrRepository(repository, 'server-sagemaker-cuda-v2.3') }),
    );
    expect((stack.resolve(endpoint.cfnEndpointConfig.productionVariants) as any[])[0].inferenceAmiVersion).toBe(
      InferenceAmiVersion.AL2023_GPU_4_1,
    );
  });

  test('GIVEN an own image with an unknown CUDA version WHEN synthesized THEN an acknowledgeable warning names the way out', () => {
    const stack = newStack();
    const repository = ecr.Repository.fromRepositoryName(stack, 'Repo', 'my-vllm');
    new PrefixAwareLlmEndpoint(stack, 'Llm', baseProps({ image: VllmImage.fromEcrRepository(repository, 'build-42') }));
    expect(warningsOf(stack).join('\n')).toContain(
      'Pass VllmImage.fromEcrRepository(repo, tag, { cudaVersion }) or inferenceAmiVersion',
    );
  });

  test.each([
    [
      'a CUDA 13 LMI tag on the CUDA 12 AMI',
      () => VllmImage.lmi({ tag: '0.36.0-lmi28.0.0-cu130-v1.1', inferenceAmiVersion: InferenceAmiVersion.AL2_GPU_3_1 }),
      "image.inferenceAmiVersion 'al2-ami-sagemaker-inference-gpu-3-1' has a CUDA 12 driver, but the image needs CUDA 13 (tag '0.36.0-lmi28.0.0-cu130-v1.1'); " +
        "use 'al2023-ami-sagemaker-inference-gpu-4-1' (got 'al2-ami-sagemaker-inference-gpu-3-1')",
    ],
    [
      'the default DLC on the CUDA 12.2 AMI',
      () => VllmImage.dlc({ inferenceAmiVersion: InferenceAmiVersion.AL2_GPU_2 }),
      "image.inferenceAmiVersion 'al2-ami-sagemaker-inference-gpu-2' has a CUDA 12 driver, but the image needs CUDA 13 (tag 'server-sagemaker-cuda-v2.3'); " +
        "use 'al2023-ami-sagemaker-inference-gpu-4-1' (got 'al2-ami-sagemaker-inference-gpu-2')",
    ],
  ])('GIVEN %s WHEN built THEN synth fails', (_name, image, message) => {
    expect(problemsFor({ image: image() })).toEqual([message]);
  });

  test('GIVEN an own CUDA 13 image on the CUDA 12 AMI WHEN built THEN synth fails naming cudaVersion', () => {
    const stack = newStack();
    const repository = ecr.Repository.fromRepositoryName(stack, 'Repo', 'my-vllm');
    expect(
      problemsOf(
        () =>
          new PrefixAwareLlmEndpoint(
            stack,
            'Llm',
            baseProps({
              image: VllmImage.fromEcrRepository(repository, 'b', {
                cudaVersion: 13,
                inferenceAmiVersion: InferenceAmiVersion.AL2_GPU_3_1,
              }),
            }),
          ),
      ),
    ).toEqual([
      "image.inferenceAmiVersion 'al2-ami-sagemaker-inference-gpu-3-1' has a CUDA 12 driver, but the image needs CUDA 13 (cudaVersion 13); " +
        "use 'al2023-ami-sagemaker-inference-gpu-4-1' (got 'al2-ami-sagemaker-inference-gpu-3-1')",
    ]);
  });

  test('GIVEN a CUDA 12 image on the CUDA 13 AMI WHEN built THEN it is accepted (a newer driver runs older CUDA)', () => {
    expect(
      problemsFor({
        image: VllmImage.dlc({
          tag: 'server-sagemaker-cuda-v1.4',
          inferenceAmiVersion: InferenceAmiVersion.AL2023_GPU_4_1,
        }),
      }),
    ).toEqual([]);
  });

  test.each([11, 14])('GIVEN cudaVersion %d WHEN built THEN it is refused with the allowed values', (cudaVersion) => {
    const stack = newStack();
    const repository = ecr.Repository.fromRepositoryName(stack, 'Repo', 'my-vllm');
    expect(
      problemsOf(
        () =>
          new PrefixAwareLlmEndpoint(
            stack,
            'Llm',
            baseProps({
              image: VllmImage.fromEcrRepository(repository, 'b', { cudaVersion }),
            }),
          ),
      ),
    ).toEqual([`image.cudaVersion must be 12 or 13 (got ${cudaVersion})`]);
  });
});
