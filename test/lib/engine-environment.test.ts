import fc from 'fast-check';
import { EngineEnvConvention } from '../../lib/index';
import { envSuffixForFlag, renderEngineEnvironment, validateEngineOptions } from '../../lib/private/engine-environment';
import { loadEngineArgs } from '../../lib/private/router-settings';
import { ProblemCollector } from '../../lib/private/validation';

const HF = { huggingFaceModelId: 'meta-llama/Llama-3.1-70B-Instruct' };

function problems(
  options: Parameters<typeof validateEngineOptions>[0],
  convention = EngineEnvConvention.SM_VLLM,
): readonly string[] {
  const collector = new ProblemCollector();
  validateEngineOptions(options, convention, collector);
  return collector.list();
}

describe('when rendering for the vLLM DLC (SM_VLLM_*)', () => {
  test('GIVEN a Hugging Face model and defaults WHEN rendered THEN model, TP and prefix caching are set, nothing else', () => {
    expect(
      renderEngineEnvironment({
        convention: EngineEnvConvention.SM_VLLM,
        model: HF,
        options: {},
        tensorParallelSize: 8,
      }),
    ).toEqual({
      SM_VLLM_ENABLE_PREFIX_CACHING: 'true',
      SM_VLLM_MODEL: 'meta-llama/Llama-3.1-70B-Instruct',
      SM_VLLM_TENSOR_PARALLEL_SIZE: '8',
    });
  });

  test('GIVEN every option WHEN rendered THEN each becomes its SM_VLLM_ flag', () => {
    const env = renderEngineEnvironment({
      convention: EngineEnvConvention.SM_VLLM,
      model: { ...HF, huggingFaceRevision: 'abc123', huggingFaceToken: '{{resolve:secretsmanager:x}}' },
      options: {
        maxModelLen: 32768,
        gpuMemoryUtilization: 0.92,
        maxNumSeqs: 256,
        servedModelName: 'llama',
        extraArgs: { 'max-num-batched-tokens': 8192, 'enable-chunked-prefill': true, 'kv-cache-dtype': 'fp8' },
      },
      tensorParallelSize: 4,
    });
    expect(env).toEqual({
      HF_TOKEN: '{{resolve:secretsmanager:x}}',
      SM_VLLM_ENABLE_CHUNKED_PREFILL: 'true',
      SM_VLLM_ENABLE_PREFIX_CACHING: 'true',
      SM_VLLM_GPU_MEMORY_UTILIZATION: '0.92',
      SM_VLLM_KV_CACHE_DTYPE: 'fp8',
      SM_VLLM_MAX_MODEL_LEN: '32768',
      SM_VLLM_MAX_NUM_BATCHED_TOKENS: '8192',
      SM_VLLM_MAX_NUM_SEQS: '256',
      SM_VLLM_MODEL: 'meta-llama/Llama-3.1-70B-Instruct',
      SM_VLLM_REVISION: 'abc123',
      SM_VLLM_SERVED_MODEL_NAME: 'llama',
      SM_VLLM_TENSOR_PARALLEL_SIZE: '4',
    });
  });

  test('GIVEN prefix caching off WHEN rendered THEN the negative flag is set, because the DLC drops false and vLLM defaults to on', () => {
    const env = renderEngineEnvironment({
      convention: EngineEnvConvention.SM_VLLM,
      model: HF,
      options: { enablePrefixCaching: false },
      tensorParallelSize: 8,
    });
    expect(env.SM_VLLM_NO_ENABLE_PREFIX_CACHING).toBe('true');
    expect(env.SM_VLLM_ENABLE_PREFIX_CACHING).toBeUndefined();
  });

  test('GIVEN an S3 model WHEN rendered THEN the model is the mount path', () => {
    const env = renderEngineEnvironment({
      convention: EngineEnvConvention.SM_VLLM,
      model: {},
      options: {},
      tensorParallelSize: 8,
    });
    expect(env.SM_VLLM_MODEL).toBe('/opt/ml/model');
  });
});

describe('when rendering for LMI (OPTION_*)', () => {
  test('GIVEN a Hugging Face model and defaults WHEN rendered THEN model, TP and prefix caching are set, and no pre-LMI-17 async recipe', () => {
    // LMI 17+ runs vLLM in async mode by default; OPTION_ASYNC_MODE / OPTION_ROLLING_BATCH / OPTION_ENTRYPOINT are not needed.
    expect(
      renderEngineEnvironment({ convention: EngineEnvConvention.LMI, model: HF, options: {}, tensorParallelSize: 8 }),
    ).toEqual({
      HF_MODEL_ID: 'meta-llama/Llama-3.1-70B-Instruct',
      OPTION_ENABLE_PREFIX_CACHING: 'true',
      OPTION_TENSOR_PARALLEL_DEGREE: '8',
      SERVING_FAIL_FAST: 'true',
    });
  });

  test('GIVEN every option WHEN rendered THEN each becomes its OPTION_ variable', () => {
    const env = renderEngineEnvironment({
      convention: EngineEnvConvention.LMI,
      model: { huggingFaceRevision: 'v1' },
      options: {
        maxModelLen: 8192,
        gpuMemoryUtilization: 0.9,
        maxNumSeqs: 64,
        enablePrefixCaching: false,
        servedModelName: 'm',
        extraArgs: { 'enforce-eager': false },
      },
      tensorParallelSize: 2,
    });
    expect(env).toMatchObject({
      HF_MODEL_ID: '/opt/ml/model',
      HF_REVISION: 'v1',
      OPTION_MAX_MODEL_LEN: '8192',
      OPTION_GPU_MEMORY_UTILIZATION: '0.9',
      OPTION_MAX_ROLLING_BATCH_SIZE: '64',
      OPTION_ENABLE_PREFIX_CACHING: 'false',
      OPTION_SERVED_MODEL_NAME: 'm',
      OPTION_ENFORCE_EAGER: 'false',
      OPTION_TENSOR_PARALLEL_DEGREE: '2',
    });
  });
});

describe('when flag names are turned into variable suffixes', () => {
  test("GIVEN any kebab-case flag WHEN converted THEN lower-casing and dashes reproduce the flag (the DLC's own inverse)", () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[a-z0-9]{1,8}$/), { minLength: 1, maxLength: 5 }), (words) => {
        const flag = words.join('-');
        const suffix = envSuffixForFlag(flag);
        expect(suffix).toMatch(/^[A-Z0-9_]+$/);
        expect(suffix.toLowerCase().replace(/_/g, '-')).toBe(flag);
      }),
    );
  });
});

describe('when engine options are validated', () => {
  test('GIVEN valid options WHEN validated THEN there is no problem', () => {
    expect(problems({ tensorParallelSize: 8, maxModelLen: 1, maxNumSeqs: 1, gpuMemoryUtilization: 1 })).toEqual([]);
  });

  test('GIVEN tensorParallelSize 0 (min−1) WHEN validated THEN it is refused', () => {
    expect(problems({ tensorParallelSize: 0 })).toEqual([
      'engine.tensorParallelSize must be an integer of at least 1 (got 0)',
    ]);
  });

  test('GIVEN maxModelLen 0 (min−1) WHEN validated THEN it is refused', () => {
    expect(problems({ maxModelLen: 0 })).toEqual(['engine.maxModelLen must be an integer of at least 1 (got 0)']);
  });

  test('GIVEN maxNumSeqs 0 (min−1) WHEN validated THEN it is refused', () => {
    expect(problems({ maxNumSeqs: 0 })).toEqual(['engine.maxNumSeqs must be an integer of at least 1 (got 0)']);
  });

  test('GIVEN gpuMemoryUtilization 0 (just below the range) WHEN validated THEN it is refused', () => {
    expect(problems({ gpuMemoryUtilization: 0 })).toEqual([
      'engine.gpuMemoryUtilization must be greater than 0 and at most 1 (got 0)',
    ]);
  });

  test('GIVEN gpuMemoryUtilization 1.01 (max+) WHEN validated THEN it is refused', () => {
    expect(problems({ gpuMemoryUtilization: 1.01 })).toEqual([
      'engine.gpuMemoryUtilization must be greater than 0 and at most 1 (got 1.01)',
    ]);
  });

  test('GIVEN an empty servedModelName WHEN validated THEN it is refused', () => {
    expect(problems({ servedModelName: '' })).toEqual(["engine.servedModelName must not be empty (got '')"]);
  });

  test('GIVEN extraArgs with a leading dash WHEN validated THEN the flag name is refused', () => {
    expect(problems({ extraArgs: { '--max-num-batched-tokens': 1 } })).toEqual([
      "engine.extraArgs['--max-num-batched-tokens']: flag names must be lower-case words joined by '-', without leading dashes (got '--max-num-batched-tokens')",
    ]);
  });

  test('GIVEN extraArgs setting tensor-parallel-size WHEN validated THEN it points to the first-class option', () => {
    expect(problems({ extraArgs: { 'tensor-parallel-size': 4 } })).toEqual([
      "engine.extraArgs['tensor-parallel-size'] is set by engine.tensorParallelSize; set it there instead (got 4)",
    ]);
  });

  test('GIVEN extraArgs false for the DLC WHEN validated THEN it explains the no- form', () => {
    expect(problems({ extraArgs: { 'enable-chunked-prefill': false } })).toEqual([
      "engine.extraArgs['enable-chunked-prefill'] is false, which the vLLM DLC drops without a trace; use { 'no-enable-chunked-prefill': true } to turn a default-on flag off (got false)",
    ]);
  });

  test('GIVEN extraArgs false for LMI WHEN validated THEN it is accepted (LMI passes false through)', () => {
    expect(problems({ extraArgs: { 'enable-chunked-prefill': false } }, EngineEnvConvention.LMI)).toEqual([]);
  });

  test('GIVEN an extraArgs value of 1025 characters (max+1) WHEN validated THEN it is refused', () => {
    expect(problems({ extraArgs: { 'chat-template': 'x'.repeat(1025) } })).toEqual([
      "engine.extraArgs['chat-template'] must be at most 1024 characters (got 1025)",
    ]);
  });

  test('GIVEN an extraArgs value of 1024 characters (max) WHEN validated THEN it is accepted', () => {
    expect(problems({ extraArgs: { 'chat-template': 'x'.repeat(1024) } })).toEqual([]);
  });

  test('GIVEN an infinite number WHEN validated THEN it is refused', () => {
    expect(problems({ extraArgs: { 'max-num-batched-tokens': Infinity } })).toEqual([
      "engine.extraArgs['max-num-batched-tokens'] must be a finite number (got Infinity)",
    ]);
  });
});

describe('when scheduler options are set (the ranges of the router’s --engine-arg, router/src/emulator/engine-args.ts)', () => {
  test('GIVEN them WHEN rendered for the DLC and LMI THEN each becomes its SM_VLLM_ / OPTION_ variable', () => {
    const options = { maxNumBatchedTokens: 16384, longPrefillTokenThreshold: 2048, schedulingPolicy: 'priority' };
    const dlc = renderEngineEnvironment({
      convention: EngineEnvConvention.SM_VLLM,
      model: HF,
      options,
      tensorParallelSize: 8,
    });
    expect(dlc).toMatchObject({
      SM_VLLM_MAX_NUM_BATCHED_TOKENS: '16384',
      SM_VLLM_LONG_PREFILL_TOKEN_THRESHOLD: '2048',
      SM_VLLM_SCHEDULING_POLICY: 'priority',
    });
    const lmi = renderEngineEnvironment({
      convention: EngineEnvConvention.LMI,
      model: HF,
      options,
      tensorParallelSize: 8,
    });
    expect(lmi).toMatchObject({
      OPTION_MAX_NUM_BATCHED_TOKENS: '16384',
      OPTION_LONG_PREFILL_TOKEN_THRESHOLD: '2048',
      OPTION_SCHEDULING_POLICY: 'priority',
    });
  });

  test.each([
    [{ maxNumBatchedTokens: 0 }, 'engine.maxNumBatchedTokens must be an integer between 1 and 10000000 (got 0)'],
    [
      { maxNumBatchedTokens: 10_000_001 },
      'engine.maxNumBatchedTokens must be an integer between 1 and 10000000 (got 10000001)',
    ],
    [
      { longPrefillTokenThreshold: -1 },
      'engine.longPrefillTokenThreshold must be an integer between 0 and 100000000 (got -1)',
    ],
    [{ schedulingPolicy: 'sjf' }, 'engine.schedulingPolicy must be one of fcfs, priority (got "sjf")'],
    [
      { maxNumBatchedTokens: 128, maxNumSeqs: 256 },
      'engine: max-num-batched-tokens (128) must be at least max-num-seqs (256)',
    ],
    [
      { longPrefillTokenThreshold: 8193, maxModelLen: 8192 },
      'engine: long-prefill-token-threshold (8193) must be at most max-model-len (8192)',
    ],
  ])('GIVEN %j WHEN validated THEN refused: %s', (options, message) => {
    expect(problems(options)).toEqual([message]);
  });

  test.each([
    { maxNumBatchedTokens: 1, maxNumSeqs: 1 },
    { maxNumBatchedTokens: 10_000_000 },
    { longPrefillTokenThreshold: 0 },
    { longPrefillTokenThreshold: 8192, maxModelLen: 8192 },
    { schedulingPolicy: 'fcfs' },
  ])('GIVEN %j (a boundary) WHEN validated THEN accepted', (options) => {
    expect(problems(options)).toEqual([]);
  });

  test('GIVEN one of them in extraArgs (stacks written before the option) THEN it is checked the same way; both at once is refused', () => {
    expect(problems({ extraArgs: { 'scheduling-policy': 'priority' } })).toEqual([]);
    expect(problems({ extraArgs: { 'long-prefill-token-threshold': -1 } })).toEqual([
      "engine.extraArgs['long-prefill-token-threshold'] must be an integer between 0 and 100000000 (got -1)",
    ]);
    expect(problems({ schedulingPolicy: 'fcfs', extraArgs: { 'scheduling-policy': 'priority' } })).toEqual([
      "engine.schedulingPolicy and engine.extraArgs['scheduling-policy'] are both set; keep one (got 'priority')",
    ]);
  });
});

describe('when synth loads the router’s engine arguments', () => {
  test('GIVEN a checkout THEN lib/private/router-settings.ts finds the very module --engine-arg uses', () => {
    const router =
      require('../../router/src/emulator/engine-args') as typeof import('../../router/src/emulator/engine-args');
    expect(loadEngineArgs()?.ENGINE_ARGS).toEqual(router.ENGINE_ARGS);
  });
});
