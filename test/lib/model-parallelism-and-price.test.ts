/**
 * Settings that pass CloudFormation but fail once the GPU instances run, refused or warned about at synth; and the
 * endpoint's hourly price in synth's output. vLLM's head rules: lib/private/model-catalog.ts.
 */
import { App, Annotations as CoreAnnotations, Size, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import {
  InstanceType,
  ModelSource,
  PrefixAwareLlmComponentEndpoint,
  PrefixAwareLlmComponentEndpointProps,
  PrefixAwareLlmEndpoint,
  PrefixAwareLlmInfos,
  PrefixAwareLlmWarnings,
  RouterSidecarMode,
  RoutingStrategy,
  VllmImage,
} from '../../lib/index';
import { allowedTensorParallelSizes, headsAllowTensorParallel, modelHeads } from '../../lib/private/model-catalog';
import { LIST_PRICE_SOURCE } from '../../router/src/common/instance-prices';
import { environmentOf, newApp, problemsFor, synth, warningsOf } from './helpers';

const QWEN_7B = 'Qwen/Qwen2.5-7B-Instruct';

function infosOf(stack: Stack): { id: string; text: string }[] {
  return Annotations.fromStack(stack)
    .findInfo('*', Match.anyValue())
    .map((i) => ({ id: String(i.id), text: String(i.entry.data) }));
}

/** The annotations' own ids: `addInfoV2`/`addWarningV2` append "[ack: id]" to the message. */
function withId(texts: readonly string[], id: string): string[] {
  return texts.filter((t) => t.includes(`[ack: ${id}]`));
}

describe("when vLLM's head rules are applied", () => {
  test.each([
    [28, 4, 1, 'starts'],
    [28, 4, 2, 'starts'],
    [28, 4, 4, 'starts'],
    [28, 4, 7, 'exits'],
    [28, 4, 8, 'exits'],
    [64, 8, 8, 'starts'],
    [64, 8, 16, 'starts'],
    [40, 8, 8, 'starts'],
    [24, 8, 16, 'exits'],
    [32, 8, 3, 'exits'],
    [12, 2, 4, 'starts'],
    [12, 2, 3, 'exits'],
    [14, 2, 4, 'exits'],
  ])(
    'GIVEN %i attention and %i key/value heads and tensor parallel %i THEN vLLM %s',
    (attentionHeads, kvHeads, tp, outcome) => {
      expect(headsAllowTensorParallel({ attentionHeads, kvHeads }, tp)).toBe(outcome === 'starts');
    },
  );

  test("GIVEN an -Instruct id in any case THEN the base model's heads are found; an unknown id has none", () => {
    expect(modelHeads('qwen/QWEN2.5-7B-instruct')).toEqual({ attentionHeads: 28, kvHeads: 4 });
    expect(modelHeads('Qwen/Qwen2.5-7B')).toEqual({ attentionHeads: 28, kvHeads: 4 });
    expect(modelHeads('acme/private-model')).toBeUndefined();
    expect(allowedTensorParallelSizes({ attentionHeads: 28, kvHeads: 4 }, 8)).toEqual([1, 2, 4]);
  });
});

describe('when a catalogued model meets a tensor parallel size its heads do not divide', () => {
  test('GIVEN Qwen2.5-7B (28 heads) with tensor parallel 8 on a p5 THEN synth fails naming the prop and the sizes that start', () => {
    expect(problemsFor({ model: ModelSource.huggingFace(QWEN_7B), engine: { tensorParallelSize: 8 } })).toEqual([
      'engine.tensorParallelSize must be a size the 28 attention heads and 4 key/value heads of Qwen/Qwen2.5-7B-Instruct divide, or vLLM exits at start; ' +
        'allowed on ml.p5.48xlarge: 1, 2, 4 (got 8)',
    ]);
  });

  test('GIVEN Qwen2.5-7B with the tensor parallel size left out on a p5 THEN it runs with 4, the largest that starts, and the idle GPUs are warned about', () => {
    const { stack, template } = synth({ model: ModelSource.huggingFace(QWEN_7B) });
    expect(environmentOf(template).SM_VLLM_TENSOR_PARALLEL_SIZE).toBe('4');
    expect(warningsOf(stack).join('\n')).toContain('vLLM uses 4 of the 8 GPUs of ml.p5.48xlarge');
    expect(withId(warningsOf(stack), PrefixAwareLlmWarnings.MODEL_HEADS_UNKNOWN)).toEqual([]);
  });

  test('GIVEN Llama 3.1 70B (64 heads) on a p5 THEN tensor parallel 8 is the default and nothing about heads is said', () => {
    const { stack, template } = synth();
    expect(environmentOf(template).SM_VLLM_TENSOR_PARALLEL_SIZE).toBe('8');
    expect(warningsOf(stack)).toEqual([]);
  });
});

describe('when the model is not in the catalogue', () => {
  test('GIVEN an unknown Hugging Face model and the default tensor parallel size 8 THEN synth warns, with an id, that vLLM may exit at start', () => {
    const { stack } = synth({ model: ModelSource.huggingFace('acme/private-13b') });
    const warnings = withId(warningsOf(stack), PrefixAwareLlmWarnings.MODEL_HEADS_UNKNOWN);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("unless num_attention_heads in the model's config.json divides by 8");
  });

  test('GIVEN the tensor parallel size set explicitly, or one GPU THEN nothing is warned', () => {
    expect(
      warningsOf(
        synth({ model: ModelSource.huggingFace('acme/private-13b'), engine: { tensorParallelSize: 8 } }).stack,
      ),
    ).toEqual([]);
    expect(
      warningsOf(
        synth({ model: ModelSource.huggingFace('acme/private-13b'), instanceType: InstanceType.ML_G6E_2XLARGE }).stack,
      ),
    ).toEqual([]);
  });
});

describe('when the router sidecar runs several engines on an instance', () => {
  const sidecar = (engines: number) => VllmImage.withRouterSidecar({ mode: RouterSidecarMode.MULTI_ENGINE, engines });

  test('GIVEN 4 engines on a 4-GPU ml.g5.12xlarge THEN the template renders tensor parallel 1, what each engine runs', () => {
    const { template } = synth({
      model: ModelSource.huggingFace(QWEN_7B),
      instanceType: InstanceType.ML_G5_12XLARGE,
      image: sidecar(4),
    });
    expect(environmentOf(template).SM_VLLM_TENSOR_PARALLEL_SIZE).toBe('1');
  });

  test('GIVEN 2 engines on a p5 THEN each renders tensor parallel 4, and no GPU is reported idle', () => {
    const { stack, template } = synth({ model: ModelSource.huggingFace(QWEN_7B), image: sidecar(2) });
    expect(environmentOf(template).SM_VLLM_TENSOR_PARALLEL_SIZE).toBe('4');
    expect(withId(warningsOf(stack), PrefixAwareLlmWarnings.UNUSED_GPUS)).toEqual([]);
  });

  test('GIVEN an explicit tensor parallel size other than the share THEN synth fails: the container would replace it', () => {
    expect(problemsFor({ image: sidecar(2), engine: { tensorParallelSize: 8 } })).toEqual([
      'engine.tensorParallelSize must be 4 in multi-engine mode, or left out: each of the 2 engines runs on 4 of the 8 GPUs of ml.p5.48xlarge, ' +
        'and the container gives it --tensor-parallel-size 4 (got 8)',
    ]);
    expect(problemsFor({ image: sidecar(2), engine: { tensorParallelSize: 4 } })).toEqual([]);
  });

  test('GIVEN one engine of Qwen2.5-7B on 8 GPUs THEN synth fails on image.engines, naming the engine counts that start', () => {
    expect(problemsFor({ model: ModelSource.huggingFace(QWEN_7B), image: sidecar(1) })).toEqual([
      'image.engines must leave each engine a tensor parallel size that the 28 attention heads and 4 key/value heads of Qwen/Qwen2.5-7B-Instruct divide: ' +
        '1 engines on the 8 GPUs of ml.p5.48xlarge give each 8, and vLLM exits at start; allowed: 2, 4, 8 (got 1)',
    ]);
  });
});

describe('when synth states what the endpoint costs', () => {
  test('GIVEN 2 × ml.p5.48xlarge THEN an info names instances × the list price, its source and date, with an id a user can acknowledge', () => {
    const { stack } = synth();
    const infos = infosOf(stack).filter((i) => i.text.includes(`[ack: ${PrefixAwareLlmInfos.HOURLY_PRICE}]`));
    expect(infos).toHaveLength(1);
    expect(infos[0].text).toContain(
      `Endpoint price: 2 × ml.p5.48xlarge at $63/instance-hour = $126/hour (~$91,980/month at 730 h); price: ${LIST_PRICE_SOURCE}.`,
    );
    expect(infos[0].text).toContain('recorded 2026-11-30');
  });

  test('GIVEN autoscaling from 2 to 4 THEN the price is the range', () => {
    const { stack } = synth({ autoScaling: { minCapacity: 2, maxCapacity: 4 } });
    expect(
      infosOf(stack)
        .map((i) => i.text)
        .join('\n'),
    ).toContain('2–4 × ml.p5.48xlarge at $63/instance-hour = $126–$252/hour');
  });

  test('GIVEN a routing variant THEN both full fleets are priced', () => {
    const { stack } = synth({ routingVariants: [{ variantName: 'Random', routing: RoutingStrategy.random() }] });
    expect(
      infosOf(stack)
        .map((i) => i.text)
        .join('\n'),
    ).toContain('4 × ml.p5.48xlarge in 2 variants at $63/instance-hour = $252/hour');
  });

  test('GIVEN a type the price table does not cover THEN the info says so and points to the pricing page', () => {
    const { stack } = synth({ instanceType: InstanceType.ML_G5_12XLARGE, engine: { tensorParallelSize: 4 } });
    expect(
      infosOf(stack)
        .map((i) => i.text)
        .join('\n'),
    ).toContain(
      '2 × ml.g5.12xlarge: no built-in price for ml.g5.12xlarge (the built-in prices cover ml.p5.48xlarge, ml.g6e.2xlarge); see https://aws.amazon.com/sagemaker/pricing/',
    );
  });

  test('GIVEN the info acknowledged on the stack THEN it is gone', () => {
    const app = newApp();
    const stack = new Stack(app, 'Acked');
    CoreAnnotations.of(stack).acknowledgeInfo(PrefixAwareLlmInfos.HOURLY_PRICE, 'Budget approved.');
    new PrefixAwareLlmEndpoint(stack, 'Llm', {
      model: ModelSource.huggingFace('meta-llama/Llama-3.1-70B-Instruct'),
      instanceType: InstanceType.ML_P5_48XLARGE,
    });
    expect(infosOf(stack).filter((i) => i.text.includes('Endpoint price'))).toEqual([]);
  });
});

describe('when synth states what a component endpoint costs', () => {
  /** One Qwen2.5-7B component (one GPU, 16 GiB a copy): it fits an ml.g6e.2xlarge (1 × L40S, 64 GiB). */
  function componentEndpoint(props: Partial<PrefixAwareLlmComponentEndpointProps>): Stack {
    const stack = new Stack(newApp(), 'Components');
    const endpoint = new PrefixAwareLlmComponentEndpoint(stack, 'Llm', props);
    endpoint.addModel('Base', {
      model: ModelSource.huggingFace(QWEN_7B),
      acceleratorsPerCopy: 1,
      minMemoryPerCopy: Size.gibibytes(16),
    });
    return stack;
  }

  test('GIVEN 2 × ml.g6e.2xlarge THEN the same info as a model endpoint prices the fleet', () => {
    const infos = infosOf(componentEndpoint({ instanceType: InstanceType.ML_G6E_2XLARGE })).filter((i) =>
      i.text.includes(`[ack: ${PrefixAwareLlmInfos.HOURLY_PRICE}]`),
    );
    expect(infos).toHaveLength(1);
    expect(infos[0].text).toContain(
      `Endpoint price: 2 × ml.g6e.2xlarge at $2.6/instance-hour = $5.2/hour (~$3,796/month at 730 h); price: ${LIST_PRICE_SOURCE}.`,
    );
  });

  test('GIVEN managed instance scaling from 0 to 4 THEN the price is the range it may bill, from nothing', () => {
    const stack = componentEndpoint({
      instanceType: InstanceType.ML_G6E_2XLARGE,
      allowPrefixAwareOnSingleInstance: true,
      managedInstanceScaling: { minInstanceCount: 0, maxInstanceCount: 4 },
    });
    expect(
      infosOf(stack)
        .map((i) => i.text)
        .join('\n'),
    ).toContain('0–4 × ml.g6e.2xlarge at $2.6/instance-hour = $0–$10.4/hour');
  });

  test('GIVEN no instanceType THEN synth warns that the default p5 fleet runs, with its price', () => {
    const warnings = withId(warningsOf(componentEndpoint({})), PrefixAwareLlmWarnings.DEFAULT_INSTANCE_TYPE);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(
      'instanceType is not set, so the endpoint runs the default ml.p5.48xlarge (8 × H100 80GB): 2 × ml.p5.48xlarge at $63/instance-hour = $126/hour',
    );
  });
});

describe('when an endpoint is priced', () => {
  const endpointOf = (instanceCount: number, autoScaling?: { minCapacity: number; maxCapacity: number }) => {
    const stack = new Stack(newApp(), 'Bill');
    new PrefixAwareLlmEndpoint(stack, 'Llm', {
      model: ModelSource.huggingFace(QWEN_7B),
      instanceType: InstanceType.ML_G6E_2XLARGE,
      instanceCount,
      ...(autoScaling ? { autoScaling } : {}),
    });
    return stack;
  };

  test('GIVEN any priced fleet THEN the price is a stack output cdk deploy prints, the same sentence as the info', () => {
    const stack = endpointOf(2);
    const outputs = Template.fromStack(stack).findOutputs('*');
    const price = Object.values(outputs).map((o) => String(o.Value));
    expect(price).toHaveLength(1);
    expect(infosOf(stack).map((i) => i.text)[0]).toContain(price[0]);
    expect(price[0]).toContain('2 × ml.g6e.2xlarge at $2.6/instance-hour = $5.2/hour');
  });
});

describe('when instanceType is left out', () => {
  function defaulted(app: App = newApp()) {
    const stack = new Stack(app, 'Defaulted');
    new PrefixAwareLlmEndpoint(stack, 'Llm', { model: ModelSource.huggingFace(QWEN_7B) });
    return stack;
  }

  test('THEN synth warns, with an id, that the default p5 fleet runs and what it costs an hour', () => {
    const warnings = withId(warningsOf(defaulted()), PrefixAwareLlmWarnings.DEFAULT_INSTANCE_TYPE);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(
      'instanceType is not set, so the endpoint runs the default ml.p5.48xlarge (8 × H100 80GB): 2 × ml.p5.48xlarge at $63/instance-hour = $126/hour',
    );
  });

  test('GIVEN the warning acknowledged THEN it is gone', () => {
    const app = newApp();
    const stack = defaulted(app);
    CoreAnnotations.of(stack).acknowledgeWarning(PrefixAwareLlmWarnings.DEFAULT_INSTANCE_TYPE, 'A p5 is what we want.');
    expect(withId(warningsOf(stack), PrefixAwareLlmWarnings.DEFAULT_INSTANCE_TYPE)).toEqual([]);
  });
});
