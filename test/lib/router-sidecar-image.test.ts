import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Duration, Stack, aws_s3 as s3 } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import {
  InferenceAmiVersion,
  InstanceType,
  ModelSource,
  PrefixAwareLlmEndpoint,
  RouterSidecarMode,
  RoutingStrategy,
  VllmImage,
} from '../../lib/index';
import { POLICY_NAMES } from '../../router/src/policy/policy-registry';
import { baseProps, build, environmentOf, newApp, onlyResource, synth, variantOf } from './helpers';

const ROOT = join(__dirname, '..', '..');

describe('when the image is the router sidecar in sagemaker mode', () => {
  const { stack, endpoint, template } = synth({ image: VllmImage.withRouterSidecar(), endpointName: 'llm-sidecar' });

  it("THEN the model runs the image asset built from router/Dockerfile, from the stack's asset repository", () => {
    const image = onlyResource(template, 'AWS::SageMaker::Model').PrimaryContainer.Image;
    expect(JSON.stringify(image)).toContain('cdk-hnb659fds-container-assets');
    const assets = stack.node.findAll().filter((c) => c.node.id === 'RouterSidecarImage');
    expect(assets).toHaveLength(1);
  });

  it('THEN the DLC settings stay: SM_VLLM engine variables with prefix caching, the DLC AMI, PREFIX_AWARE routing', () => {
    const env = environmentOf(template);
    expect(env).toMatchObject({
      SM_VLLM_MODEL: 'meta-llama/Llama-3.1-70B-Instruct',
      SM_VLLM_ENABLE_PREFIX_CACHING: 'true',
      SM_VLLM_TENSOR_PARALLEL_SIZE: '8',
      PREFIX_ROUTER_MODE: 'sagemaker',
      PREFIX_ROUTER_EMF: 'on',
      PREFIX_ROUTER_EMF_ENDPOINT_NAME: 'llm-sidecar',
    });
    expect(env.PREFIX_ROUTER_ENGINES).toBeUndefined();
    expect(variantOf(template).InferenceAmiVersion).toBe(InferenceAmiVersion.AL2023_GPU_4_1);
    expect(variantOf(template).RoutingConfig.RoutingStrategy).toBe('PREFIX_AWARE');
    expect(endpoint.endpointName).toBe('llm-sidecar');
  });

  it('THEN the execution role may pull from the asset repository only, plus the registry login', () => {
    const statements = Template.fromStack(stack).findResources('AWS::IAM::Policy');
    const all = Object.values(statements).flatMap((p: any) => p.Properties.PolicyDocument.Statement);
    const pull = all.find((s: any) => JSON.stringify(s.Action).includes('ecr:BatchGetImage'));
    expect(Array.isArray(pull.Resource)).toBe(false); // one repository
    expect(JSON.stringify(pull.Resource)).toContain(':repository/');
    expect(JSON.stringify(pull.Resource)).toContain('cdk-hnb659fds-container-assets');
    expect(all.some((s: any) => s.Action === 'ecr:GetAuthorizationToken' && s.Resource === '*')).toBe(true);
  });
});

describe('when the sidecar runs several engines with a policy and more router settings', () => {
  it('THEN they reach the container environment', () => {
    const { template } = synth({
      image: VllmImage.withRouterSidecar({
        mode: RouterSidecarMode.MULTI_ENGINE,
        engines: 4,
        policy: 'least-outstanding-requests',
        emf: false,
        routerEnvironment: { PREFIX_ROUTER_HEALTH_INTERVAL_MS: '1000' },
      }),
      routing: RoutingStrategy.leastOutstandingRequests(),
    });
    expect(environmentOf(template)).toMatchObject({
      PREFIX_ROUTER_MODE: 'multi-engine',
      PREFIX_ROUTER_ENGINES: '4',
      PREFIX_ROUTER_POLICY: 'least-outstanding-requests',
      PREFIX_ROUTER_EMF: 'off',
      PREFIX_ROUTER_HEALTH_INTERVAL_MS: '1000',
      SM_VLLM_ENABLE_PREFIX_CACHING: 'true',
    });
  });

  it('GIVEN a base image with a CUDA 12 DLC tag THEN it is the build argument and the AMI follows its tag', () => {
    const base = '763104351884.dkr.ecr.us-west-2.amazonaws.com/vllm:server-sagemaker-cuda-v1.2';
    const { stack, template } = synth({ image: VllmImage.withRouterSidecar({ baseImage: base }) });
    expect(variantOf(template).InferenceAmiVersion).toBe(InferenceAmiVersion.AL2_GPU_3_1);
    const assembly = (stack.node.root as any).synth();
    const manifest = JSON.parse(readFileSync(join(assembly.directory, `${stack.artifactId}.assets.json`), 'utf8'));
    const images = Object.values<{ source: Record<string, unknown> }>(manifest.dockerImages);
    expect(images).toHaveLength(1);
    expect(images[0].source).toMatchObject({
      dockerFile: 'router/Dockerfile',
      dockerBuildArgs: { BASE_IMAGE: base },
      platform: 'linux/amd64',
    });
  });

  it.each([
    'node:24.21.0-bookworm-slim@sha256:' + 'a'.repeat(64),
    'public.ecr.aws/docker/library/node:24.21.0-bookworm-slim',
    '123456789012.dkr.ecr.us-east-1.amazonaws.com/mirror/node@sha256:' + 'b'.repeat(64),
  ])('GIVEN nodeImage %s (pinned by digest, or a mirror) THEN it is the NODE_IMAGE build argument', (node) => {
    const { stack } = synth({ image: VllmImage.withRouterSidecar({ nodeImage: node }) });
    const assembly = (stack.node.root as any).synth();
    const manifest = JSON.parse(readFileSync(join(assembly.directory, `${stack.artifactId}.assets.json`), 'utf8'));
    const images = Object.values<{ source: Record<string, unknown> }>(manifest.dockerImages);
    expect(images[0].source.dockerBuildArgs).toEqual({ NODE_IMAGE: node });
  });
});

describe('when the sidecar image is synthesized', () => {
  it('THEN synth needs no Docker engine and stages a context with the Dockerfile and sources but no node_modules, cdk.out or dist', () => {
    const app = newApp();
    const stack = new Stack(app, 'Staged');
    new PrefixAwareLlmEndpoint(stack, 'Llm', baseProps({ image: VllmImage.withRouterSidecar() }));
    const assembly = app.synth();
    const staged = readdirSync(assembly.directory).filter((d) => d.startsWith('asset.'));
    expect(staged).toHaveLength(1);
    const dir = join(assembly.directory, staged[0]);
    for (const present of [
      'router/Dockerfile',
      'router/entrypoint.sh',
      'router/tsconfig.container.json',
      'router/src/container/supervisor.ts',
      'bin/prefix-router.ts',
      'package.json',
      'package-lock.json',
      'tsconfig.json',
    ]) {
      expect(existsSync(join(dir, present))).toBe(true);
    }
    for (const absent of [
      'node_modules',
      'cdk.out',
      'dist',
      'test',
      'lib',
      '.git',
      'README.md',
      'bin/app.ts',
      'router/bench',
    ])
      expect(existsSync(join(dir, absent))).toBe(false);
    expect(existsSync(join(ROOT, 'node_modules'))).toBe(true); // the exclusion was tested against a real node_modules
  });
});

describe('when sidecar options are invalid', () => {
  it.each([
    // The router's own messages (router/src/container/container-config.ts), led by the prop that set the variable.
    [
      { mode: RouterSidecarMode.MULTI_ENGINE },
      'image.engines (PREFIX_ROUTER_ENGINES) must be set in multi-engine mode: an integer between 1 and 64 (got nothing)',
    ],
    [
      { mode: RouterSidecarMode.MULTI_ENGINE, engines: 0 },
      'image.engines (PREFIX_ROUTER_ENGINES) must be an integer between 1 and 64 (got "0")',
    ],
    [
      { mode: RouterSidecarMode.MULTI_ENGINE, engines: 65 },
      'image.engines (PREFIX_ROUTER_ENGINES) must be an integer between 1 and 64 (got "65")',
    ],
    [{ engines: 2 }, 'image.engines (PREFIX_ROUTER_ENGINES) must be 1 in sagemaker mode'],
    [
      { mode: 'fleet' as RouterSidecarMode },
      'image.mode (PREFIX_ROUTER_MODE) must be one of sagemaker, multi-engine (got "fleet")',
    ],
    [
      { policy: 'Fast Policy' },
      `image.policy (PREFIX_ROUTER_POLICY) must be one of ${POLICY_NAMES.join(', ')} (got "Fast Policy")`,
    ],
    [
      { policy: 'cache-awre' },
      `image.policy (PREFIX_ROUTER_POLICY) must be one of ${POLICY_NAMES.join(', ')} (got "cache-awre")`,
    ],
    [
      { policy: 'cache-aware?blokChars=128' },
      'image.policy (PREFIX_ROUTER_POLICY) option blokChars is not an option of policy cache-aware (its options: blockChars,',
    ],
    [
      { policy: 'cache-aware?blockChars=8' },
      'image.policy (PREFIX_ROUTER_POLICY) option blockChars must be an integer between 16 and 65536 (got 8)',
    ],
    [
      { routerEnvironment: { PREFIX_ROUTER_HEALTH_TIMEOUT_MS: 'soon' } },
      `image.routerEnvironment['PREFIX_ROUTER_HEALTH_TIMEOUT_MS'] (PREFIX_ROUTER_HEALTH_TIMEOUT_MS) must be an integer between 10 and 600000 (got "soon")`,
    ],
    [
      { routerEnvironment: { PREFIX_ROUTER_ROUTING_HEADERS: 'everything' } },
      `image.routerEnvironment['PREFIX_ROUTER_ROUTING_HEADERS'] (PREFIX_ROUTER_ROUTING_HEADERS) must be one of off, instance, all`,
    ],
    [
      { routerEnvironment: { PREFIX_ROUTER_POLCY: 'random' } },
      `image.routerEnvironment['PREFIX_ROUTER_POLCY'] is not a variable the router or the container reads; allowed: `,
    ],
    [
      { routerEnvironment: { HOME: '/x' } },
      "image.routerEnvironment keys must be PREFIX_ROUTER_* variables (got 'HOME')",
    ],
    [
      { routerEnvironment: { PREFIX_ROUTER_POLICY: 'random' } },
      'image.routerEnvironment must not set PREFIX_ROUTER_POLICY',
    ],
    [
      { routerEnvironment: { PREFIX_ROUTER_PORT: '1' } },
      'image.routerEnvironment must not set PREFIX_ROUTER_PORT: the container sets it',
    ],
    [{ baseImage: 'vllm' }, 'image.baseImage must be a registry image reference with a tag or digest'],
    [
      { nodeImage: 'node' },
      "image.nodeImage must be an image reference known at synth time with a tag, a digest or both, like node:24.21.0-bookworm-slim@sha256:<64 hex digits> (got 'node')",
    ],
    [{ nodeImage: 'Node:24' }, 'image.nodeImage must be an image reference'],
    [{ nodeImage: 'node:24@sha256:abc' }, 'image.nodeImage must be an image reference'],
    [
      { buildContext: '/nonexistent' },
      "image.buildContext must be a directory containing router/Dockerfile (got '/nonexistent')",
    ],
  ])('GIVEN %j THEN synth fails naming the prop', (options, message) => {
    expect(() => build({ image: VllmImage.withRouterSidecar(options) })).toThrow(message);
  });

  it("GIVEN engines that do not divide the instance type's GPUs THEN synth fails naming the prop", () => {
    expect(() =>
      build({
        instanceType: InstanceType.ML_G5_12XLARGE,
        image: VllmImage.withRouterSidecar({ mode: RouterSidecarMode.MULTI_ENGINE, engines: 3 }),
      }),
    ).toThrow('image.engines must divide the 4 GPUs of ml.g5.12xlarge so every engine gets the same number (got 3)');
    expect(() =>
      build({
        instanceType: InstanceType.ML_G5_12XLARGE,
        image: VllmImage.withRouterSidecar({ mode: RouterSidecarMode.MULTI_ENGINE, engines: 2 }),
      }),
    ).not.toThrow();
  });

  it('GIVEN one engine, or as many as the GPUs, in multi-engine mode THEN it is accepted', () => {
    expect(() =>
      build({ image: VllmImage.withRouterSidecar({ mode: RouterSidecarMode.MULTI_ENGINE, engines: 1 }) }),
    ).not.toThrow();
    expect(() =>
      build({ image: VllmImage.withRouterSidecar({ mode: RouterSidecarMode.MULTI_ENGINE, engines: 8 }) }),
    ).not.toThrow();
  });
});

describe('when the sidecar follows the engines KV cache events (kvCacheEvents)', () => {
  const s3Model = () =>
    ModelSource.s3(s3.Bucket.fromBucketName(new Stack(), 'Models', 'my-models'), 'models/llama', {
      s3ManagedEncryption: true,
    });
  const multi = { mode: RouterSidecarMode.MULTI_ENGINE, engines: 8 };

  it('GIVEN multi-engine mode and an S3 model THEN the container gets PREFIX_ROUTER_ENGINE_KV_EVENTS=on', () => {
    const { template } = synth({
      model: s3Model(),
      image: VllmImage.withRouterSidecar({ ...multi, kvCacheEvents: true }),
    });
    expect(environmentOf(template)).toMatchObject({
      PREFIX_ROUTER_ENGINE_KV_EVENTS: 'on',
      PREFIX_ROUTER_MODE: 'multi-engine',
    });
  });

  it('GIVEN kvCacheEvents left out or false THEN the variable is not set', () => {
    for (const kvCacheEvents of [undefined, false]) {
      const { template } = synth({ model: s3Model(), image: VllmImage.withRouterSidecar({ ...multi, kvCacheEvents }) });
      expect(environmentOf(template).PREFIX_ROUTER_ENGINE_KV_EVENTS).toBeUndefined();
    }
  });

  it.each(['sagemaker-prefix-aware', 'round-robin'])(
    'GIVEN policy %s, which does not read the events THEN synth fails naming the prop and the policies that do',
    (policy) => {
      expect(() =>
        build({ model: s3Model(), image: VllmImage.withRouterSidecar({ ...multi, policy, kvCacheEvents: true }) }),
      ).toThrow(
        `image.kvCacheEvents (PREFIX_ROUTER_ENGINE_KV_EVENTS) must be off unless the router's policy reads the engines' KV events, PREFIX_ROUTER_POLICY one of cache-aware, llm-d-precise (got on with policy ${policy})`,
      );
    },
  );

  it("GIVEN a Hugging Face model THEN synth accepts it: the container waits for the tokenizer vLLM downloads, a minute less than the endpoint's start-up health check", () => {
    const { template } = synth({ image: VllmImage.withRouterSidecar({ ...multi, kvCacheEvents: true }) });
    expect(environmentOf(template)).toMatchObject({
      PREFIX_ROUTER_ENGINE_KV_EVENTS: 'on',
      PREFIX_ROUTER_TOKENIZER_WAIT_MS: String(30 * 60_000 - 60_000),
    });
    expect(environmentOf(template).PREFIX_ROUTER_TOKENIZER).toBeUndefined();
  });

  it.each([
    [Duration.minutes(60), 3_540_000],
    [Duration.minutes(2), 60_000],
    [Duration.seconds(90), 45_000],
    [Duration.seconds(60), 30_000],
  ])(
    'GIVEN containerStartupHealthCheckTimeout %s THEN the tokenizer wait is %s ms (a minute less, at least half)',
    (timeout, waitMs) => {
      const { template } = synth({
        image: VllmImage.withRouterSidecar({ ...multi, kvCacheEvents: true }),
        containerStartupHealthCheckTimeout: timeout,
      });
      expect(environmentOf(template).PREFIX_ROUTER_TOKENIZER_WAIT_MS).toBe(String(waitMs));
    },
  );

  it('GIVEN PREFIX_ROUTER_TOKENIZER_WAIT_MS in routerEnvironment, or kvCacheEvents off THEN the construct sets no wait of its own', () => {
    const routerEnvironment = { PREFIX_ROUTER_TOKENIZER_WAIT_MS: '120000' };
    const given = synth({ image: VllmImage.withRouterSidecar({ ...multi, kvCacheEvents: true, routerEnvironment }) });
    expect(environmentOf(given.template).PREFIX_ROUTER_TOKENIZER_WAIT_MS).toBe('120000');
    const off = synth({ image: VllmImage.withRouterSidecar({ ...multi }) });
    expect(environmentOf(off.template).PREFIX_ROUTER_TOKENIZER_WAIT_MS).toBeUndefined();
  });

  it.each([
    ['-1', false],
    ['0', true],
    ['86400000', true],
    ['86400001', false],
  ])('GIVEN routerEnvironment PREFIX_ROUTER_TOKENIZER_WAIT_MS=%s THEN synth accepts it: %s', (wait, accepted) => {
    const routerEnvironment = { PREFIX_ROUTER_TOKENIZER_WAIT_MS: wait };
    const synthIt = () =>
      build({ image: VllmImage.withRouterSidecar({ ...multi, kvCacheEvents: true, routerEnvironment }) });
    if (accepted) expect(synthIt).not.toThrow();
    else
      expect(synthIt).toThrow(
        `image.routerEnvironment['PREFIX_ROUTER_TOKENIZER_WAIT_MS'] (PREFIX_ROUTER_TOKENIZER_WAIT_MS) must be an integer between 0 and 86400000 (got "${wait}")`,
      );
  });

  it.each(['PREFIX_ROUTER_KV_EVENTS', 'PREFIX_ROUTER_KV_EVENTS_REPLAY', 'PREFIX_ROUTER_ENGINE_KV_EVENTS'])(
    'GIVEN routerEnvironment setting %s THEN synth fails: the prop or the container sets it',
    (name) => {
      expect(() =>
        build({
          model: s3Model(),
          image: VllmImage.withRouterSidecar({ ...multi, routerEnvironment: { [name]: 'on' } }),
        }),
      ).toThrow(`image.routerEnvironment must not set ${name}`);
    },
  );
});
