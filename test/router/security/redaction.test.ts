import { redactArgv, redactText } from '../../../router/src/common/redact';
import { describeValue } from '../../../router/src/policy';
import { RouterConfigError, resolveRouterConfig } from '../../../router/src/config';

/** Secret shapes seen in engine commands, environment lines and configured URLs; each secret is `S3CR3T…`. */
const CORPUS: ReadonlyArray<readonly [string, string]> = [
  ['a flag and its value', '--api-key S3CR3T1'],
  ['a flag with =', '--hf-token=S3CR3T2'],
  ['a single-dash flag', '-password S3CR3T3'],
  ['a quoted value', `--api-key 'S3CR3T4 with space'`],
  ['sh -c with a flag inside', `sh -c 'sleep 1; exec vllm serve m --api-key S3CR3T5 --port 8000'`],
  ['an environment assignment', 'HF_TOKEN=S3CR3T6'],
  ['an AWS secret assignment', 'AWS_SECRET_ACCESS_KEY=S3CR3T7'],
  ['an assignment after env', 'env API_KEY=S3CR3T8 vllm serve m'],
  ['a lower-case assignment', 'db_password="S3CR3T9"'],
  ['URL userinfo', 'http://admin:S3CR3T10@10.0.0.5:8000/v1'],
  ['URL user only', 'https://S3CR3T11@models.internal/weights'],
  [
    'a signed URL query',
    'https://bucket.s3.amazonaws.com/model.tar?X-Amz-Signature=S3CR3T12&X-Amz-Credential=S3CR3T13',
  ],
  ['a token in a query', 'http://engine:8000/metrics?token=S3CR3T14'],
];

describe('when text with a secret is redacted', () => {
  it.each(CORPUS)('GIVEN %s THEN the secret is gone and the name is kept', (_what, text) => {
    const out = redactText(text);
    expect(out).not.toMatch(/S3CR3T/);
    expect(out).toContain('***');
  });

  it.each([
    '--tokenizer-mode auto',
    '--max-num-batched-tokens 8192',
    'MONKEY_BUSINESS=fine',
    'http://127.0.0.1:8000/v1/chat/completions',
    '--model meta-llama/Llama-3.1-8B-Instruct',
  ])('GIVEN no secret (%s) THEN it is unchanged', (text) => {
    expect(redactText(text)).toBe(text);
  });
});

describe('when an engine argv is logged', () => {
  it('GIVEN secrets as separate words, inside sh -c, and as assignments THEN each is redacted', () => {
    const argv = [
      'env',
      'HF_TOKEN=S3CR3TA',
      'sh',
      '-c',
      'exec vllm serve m --api-key S3CR3TB',
      '--api-key',
      'S3CR3TC',
      '--hf-token=S3CR3TD',
      '--port',
      '8000',
    ];
    const out = redactArgv(argv);
    expect(out.join(' ')).not.toMatch(/S3CR3T/);
    expect(out).toEqual([
      'env',
      'HF_TOKEN=***',
      'sh',
      '-c',
      'exec vllm serve m --api-key ***',
      '--api-key',
      '***',
      '--hf-token=***',
      '--port',
      '8000',
    ]);
  });
});

describe('when a configuration error echoes the value it got', () => {
  it('GIVEN a backend URL with a password THEN the error names the option but not the password', () => {
    expect(describeValue('http://u:S3CR3TX@h:1')).toBe('"http://***@h:1"');
    let message = '';
    try {
      resolveRouterConfig({ backends: ['http://u:S3CR3TY@127.0.0.1:8000'] });
    } catch (err) {
      expect(err).toBeInstanceOf(RouterConfigError);
      message = (err as Error).message;
    }
    expect(message).toContain('backends[0]');
    expect(message).not.toContain('S3CR3TY');
  });
});
