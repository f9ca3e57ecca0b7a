import { App, Annotations as CoreAnnotations, aws_kms as kms, aws_s3 as s3, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks, HIPAASecurityChecks, NIST80053R5Checks, type NagPack } from 'cdk-nag';
import {
  DataCaptureMode,
  type DataCaptureOptions,
  PrefixAwareLlmEndpoint,
  PrefixAwareLlmWarnings,
} from '../../lib/index';
import { baseProps, newStack, onlyResource, problemsOf, warningsOf } from './helpers';

/**
 * The dataCapture prop renders the endpoint configuration's DataCaptureConfig
 * (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DataCaptureConfig.html: InitialSamplingPercentage
 * 0–100, DestinationS3Uri ≤ 512 characters, CaptureOptions Input/Output, KmsKeyId,
 * CaptureContentTypeHeader.JsonContentTypes so JSON bodies are stored as text, not base64).
 */
function withCapture(options: Partial<DataCaptureOptions> = {}, stack: Stack = newStack()) {
  const bucket = new s3.Bucket(stack, 'CaptureBucket');
  const endpoint = new PrefixAwareLlmEndpoint(stack, 'Llm', baseProps({ dataCapture: { bucket, ...options } }));
  return { stack, endpoint, bucket };
}

function problemsWith(options: Partial<DataCaptureOptions>): readonly string[] {
  return problemsOf(() => withCapture(options));
}

describe('when dataCapture is not set', () => {
  test('GIVEN the defaults WHEN synthesized THEN the endpoint config has no DataCaptureConfig and nothing is granted on S3', () => {
    const stack = newStack();
    new PrefixAwareLlmEndpoint(stack, 'Llm', baseProps());
    const template = Template.fromStack(stack);
    expect(onlyResource(template, 'AWS::SageMaker::EndpointConfig').DataCaptureConfig).toBeUndefined();
    expect(JSON.stringify(template.findResources('AWS::IAM::Policy'))).not.toContain('s3:PutObject');
  });
});

describe('when dataCapture names a bucket', () => {
  test('GIVEN only a bucket WHEN synthesized THEN input and output are captured at 100 % as JSON under s3://BUCKET/datacapture', () => {
    const { stack } = withCapture();
    const config = onlyResource(Template.fromStack(stack), 'AWS::SageMaker::EndpointConfig').DataCaptureConfig;
    expect(config).toEqual({
      EnableCapture: true,
      InitialSamplingPercentage: 100,
      DestinationS3Uri: {
        'Fn::Join': ['', ['s3://', { Ref: expect.stringMatching(/^CaptureBucket/) }, '/datacapture']],
      },
      CaptureOptions: [{ CaptureMode: 'Input' }, { CaptureMode: 'Output' }],
      CaptureContentTypeHeader: { JsonContentTypes: ['application/json'] },
    });
  });

  test('GIVEN input only, 25 %, a prefix with slashes, a key and two JSON types THEN each renders', () => {
    const stack = newStack();
    const key = new kms.Key(stack, 'CaptureKey', { enableKeyRotation: true });
    withCapture(
      {
        mode: DataCaptureMode.INPUT,
        samplingPercentage: 25,
        prefix: '/capture/llm/',
        encryptionKey: key,
        jsonContentTypes: ['application/json', 'text/event-stream'],
      },
      stack,
    );
    const template = Template.fromStack(stack);
    const config = onlyResource(template, 'AWS::SageMaker::EndpointConfig').DataCaptureConfig;
    expect(config.CaptureOptions).toEqual([{ CaptureMode: 'Input' }]);
    expect(config.InitialSamplingPercentage).toBe(25);
    expect(config.DestinationS3Uri['Fn::Join'][1][2]).toBe('/capture/llm');
    expect(config.KmsKeyId).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^CaptureKey/), 'Arn'] });
    expect(config.CaptureContentTypeHeader).toEqual({ JsonContentTypes: ['application/json', 'text/event-stream'] });
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Action: 's3:PutObject',
            Effect: 'Allow',
            Resource: {
              'Fn::Join': ['', [{ 'Fn::GetAtt': [Match.stringLikeRegexp('^CaptureBucket'), 'Arn'] }, '/capture/llm/*']],
            },
          },
          {
            Action: ['kms:Encrypt', 'kms:GenerateDataKey'],
            Effect: 'Allow',
            Resource: { 'Fn::GetAtt': [Match.stringLikeRegexp('^CaptureKey'), 'Arn'] },
          },
        ]),
      },
    });
  });

  test('GIVEN a bucket encrypted with its own KMS key THEN the role may use that key too', () => {
    const stack = newStack();
    const bucket = new s3.Bucket(stack, 'Kms', { encryption: s3.BucketEncryption.KMS });
    new PrefixAwareLlmEndpoint(stack, 'Llm', baseProps({ dataCapture: { bucket } }));
    Template.fromStack(stack).hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Action: ['kms:Encrypt', 'kms:GenerateDataKey'],
            Effect: 'Allow',
            Resource: { 'Fn::GetAtt': [Match.stringLikeRegexp('^KmsKey'), 'Arn'] },
          },
        ]),
      },
    });
  });

  test('THEN synth warns that prompts are stored and recommends an expiring bucket; the warning can be acknowledged', () => {
    const { stack } = withCapture();
    expect(warningsOf(stack).join('\n')).toMatch(
      /dataCapture stores your users' prompts .* lifecycle rule that expires them/,
    );
    const other = newStack();
    CoreAnnotations.of(other).acknowledgeWarning(
      PrefixAwareLlmWarnings.DATA_CAPTURE_STORES_PROMPTS,
      'the bucket expires objects after 7 days',
    );
    withCapture({}, other);
    expect(warningsOf(other)).toEqual([]);
  });
});

describe('when dataCapture.samplingPercentage is at and beyond its bounds (0..100)', () => {
  test.each([[0], [100]])('GIVEN %p THEN it is accepted', (value) => {
    expect(problemsWith({ samplingPercentage: value })).toEqual([]);
  });
  test.each([[-1], [101]])('GIVEN %p THEN synth fails naming the prop and the range', (value) => {
    expect(problemsWith({ samplingPercentage: value })).toEqual([
      `dataCapture.samplingPercentage must be between 0 and 100 (got ${value})`,
    ]);
  });
  test('GIVEN 12.5 THEN it is refused as not an integer', () => {
    expect(problemsWith({ samplingPercentage: 12.5 })).toEqual([
      'dataCapture.samplingPercentage must be an integer between 0 and 100 (got 12.5)',
    ]);
  });
});

describe('when dataCapture.prefix and jsonContentTypes are checked', () => {
  // s3:// (5) + a 63-character bucket name (unknown at synth) + '/' = 69: the prefix may take 443 of the 512.
  test('GIVEN a prefix of 443 characters THEN it is accepted; 444 is refused naming the limit', () => {
    expect(problemsWith({ prefix: 'p'.repeat(443) })).toEqual([]);
    expect(problemsWith({ prefix: 'p'.repeat(444) })).toEqual([
      'dataCapture.prefix must keep the destination s3://BUCKET/PREFIX within 512 characters (at most 443 for this bucket; got 444)',
    ]);
  });
  test('GIVEN a prefix with a space THEN it is refused naming the allowed characters', () => {
    expect(problemsWith({ prefix: 'data capture' })[0]).toContain(
      "dataCapture.prefix must use only S3's safe key characters",
    );
  });
  test('GIVEN 0, 1, 10 and 11 content types THEN 1 and 10 pass and 0 and 11 are refused', () => {
    const types = (n: number) => Array.from({ length: n }, (_, i) => `application/x-type${i}.json`);
    expect(problemsWith({ jsonContentTypes: types(1) })).toEqual([]);
    expect(problemsWith({ jsonContentTypes: types(10) })).toEqual([]);
    expect(problemsWith({ jsonContentTypes: types(0) })).toEqual([
      'dataCapture.jsonContentTypes must list between 1 and 10 content types (got 0)',
    ]);
    expect(problemsWith({ jsonContentTypes: types(11) })).toEqual([
      'dataCapture.jsonContentTypes must list between 1 and 10 content types (got 11)',
    ]);
  });
  test.each([['json'], ['application/vnd.api+json'], [`application/${'x'.repeat(245)}`]])(
    "GIVEN %p, outside SageMaker's pattern or 256 characters THEN it is refused",
    (type) => {
      expect(problemsWith({ jsonContentTypes: [type] })).toEqual([
        expect.stringContaining(
          'dataCapture.jsonContentTypes entries must be type/subtype names of at most 256 characters',
        ),
      ]);
    },
  );
  test('GIVEN a content type of exactly 256 characters THEN it is accepted', () => {
    expect(problemsWith({ jsonContentTypes: [`application/${'x'.repeat(244)}`] })).toEqual([]);
  });
});

describe('when cdk-nag reviews an endpoint with dataCapture', () => {
  test.each([
    ['AwsSolutions', () => new AwsSolutionsChecks()],
    ['NIST 800-53 R5', () => new NIST80053R5Checks()],
    ['HIPAA Security', () => new HIPAASecurityChecks()],
  ] as Array<[string, () => NagPack]>)(
    'GIVEN %s THEN the construct adds no unacknowledged finding (the capture prefix wildcard is acknowledged with its reason)',
    (_name, pack) => {
      const app = new App();
      const stack = new Stack(app, 'Nag');
      const bucket = s3.Bucket.fromBucketName(stack, 'Capture', 'my-capture-bucket');
      new PrefixAwareLlmEndpoint(stack, 'Llm', baseProps({ endpointName: 'x', dataCapture: { bucket } }));
      const findings = pack()
        .validateScope(app)
        .violations.flatMap((v) =>
          v.violatingResources.map((r) => `${v.severity} ${v.ruleName} at ${r.constructPath}`),
        );
      const baseline = (() => {
        const a = new App();
        const s = new Stack(a, 'Nag');
        new PrefixAwareLlmEndpoint(s, 'Llm', baseProps({ endpointName: 'x' }));
        return pack()
          .validateScope(a)
          .violations.flatMap((v) =>
            v.violatingResources.map((r) => `${v.severity} ${v.ruleName} at ${r.constructPath}`),
          );
      })();
      expect(findings).toEqual(baseline);
    },
  );
});
