import { Annotations, aws_iam as iam, aws_sagemaker as sagemaker, Token } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { DataCaptureMode, DataCaptureOptions } from '../data-capture';
import { grantScoped } from './grants';
import { ProblemCollector, show } from './validation';

/** Id of the synth warning that Data Capture stores prompts (acknowledge it with Annotations.acknowledgeWarning). */
export const DATA_CAPTURE_STORES_PROMPTS = '@cdk-prefix-aware-llm/dataCaptureStoresPrompts';

export const DEFAULT_DATA_CAPTURE_PREFIX = 'datacapture';
export const DEFAULT_JSON_CONTENT_TYPES = ['application/json'];

/** DataCaptureConfig.DestinationS3Uri: at most 512 characters (API reference). */
const MAX_DESTINATION_URI = 512;
/** S3 bucket names are at most 63 characters: the bound used when the name is a token. */
const MAX_BUCKET_NAME = 63;
/** CaptureContentTypeHeader.JsonContentTypes: 1 to 10 entries of at most 256 characters (API reference). */
const JSON_CONTENT_TYPES_RANGE = { min: 1, max: 10 };
const MAX_CONTENT_TYPE = 256;
/** S3's "safe characters" for object keys (S3 User Guide, object key naming guidelines). */
const SAFE_KEY = /^[A-Za-z0-9!_.*'()/-]*$/;
/** CaptureContentTypeHeader.JsonContentTypes entries: the API reference's (and CloudFormation schema's) pattern. */
const CONTENT_TYPE = /^[a-zA-Z0-9](-*[a-zA-Z0-9])*\/[a-zA-Z0-9](-*[a-zA-Z0-9.])*$/;

function normalizedPrefix(options: DataCaptureOptions): string {
  return (options.prefix ?? DEFAULT_DATA_CAPTURE_PREFIX).replace(/^\/+|\/+$/g, '');
}

/** Every problem of the dataCapture prop, naming the field and the allowed range. */
export function validateDataCapture(options: DataCaptureOptions | undefined, problems: ProblemCollector): void {
  if (options === undefined) return;
  problems.integerInRange('dataCapture.samplingPercentage', options.samplingPercentage, 0, 100);
  const prefix = options.prefix;
  if (prefix !== undefined && !Token.isUnresolved(prefix)) {
    if (!SAFE_KEY.test(prefix)) {
      problems.add(
        `dataCapture.prefix must use only S3's safe key characters (letters, digits and ! - _ . * ' ( ) /) (got ${show(prefix)})`,
      );
    }
    const bucketName = options.bucket.bucketName;
    const nameLength = Token.isUnresolved(bucketName) ? MAX_BUCKET_NAME : bucketName.length;
    const uriLength = 's3://'.length + nameLength + 1 + normalizedPrefix(options).length;
    if (uriLength > MAX_DESTINATION_URI) {
      problems.add(
        `dataCapture.prefix must keep the destination s3://BUCKET/PREFIX within ${MAX_DESTINATION_URI} characters ` +
          `(at most ${MAX_DESTINATION_URI - 's3://'.length - nameLength - 1} for this bucket; got ${normalizedPrefix(options).length})`,
      );
    }
  }
  const types = options.jsonContentTypes;
  if (types !== undefined && !Token.isUnresolved(types)) {
    if (types.length < JSON_CONTENT_TYPES_RANGE.min || types.length > JSON_CONTENT_TYPES_RANGE.max) {
      problems.add(
        `dataCapture.jsonContentTypes must list between ${JSON_CONTENT_TYPES_RANGE.min} and ${JSON_CONTENT_TYPES_RANGE.max} content types (got ${types.length})`,
      );
    }
    for (const type of types) {
      if (Token.isUnresolved(type)) continue;
      if (type.length > MAX_CONTENT_TYPE || !CONTENT_TYPE.test(type)) {
        problems.add(
          `dataCapture.jsonContentTypes entries must be type/subtype names of at most ${MAX_CONTENT_TYPE} characters: letters, digits and inner hyphens, dots in the subtype, like application/json (got ${show(type)})`,
        );
      }
    }
  }
}

/**
 * The endpoint configuration's DataCaptureConfig, with the statements the execution role needs to write the
 * captures (SageMaker writes them as the endpoint's execution role): s3:PutObject under the prefix, and the KMS
 * actions on the capture key and on the bucket's own key. Warns at synth that prompts will be stored.
 */
export function renderDataCapture(
  scope: Construct,
  role: iam.IRole,
  options: DataCaptureOptions,
): sagemaker.CfnEndpointConfig.DataCaptureConfigProperty {
  const prefix = normalizedPrefix(options);
  const objects = options.bucket.arnForObjects(prefix === '' ? '*' : `${prefix}/*`);
  grantScoped(role, {
    actions: ['s3:PutObject'],
    resources: [objects],
    wildcardReason:
      'Data Capture names its objects by endpoint, variant, hour and a random id at run time; the statement is limited to the capture prefix of the capture bucket.',
  });
  for (const key of [options.encryptionKey, options.bucket.encryptionKey]) {
    if (key === undefined) continue;
    grantScoped(role, { actions: ['kms:Encrypt', 'kms:GenerateDataKey'], resources: [key.keyArn] });
  }
  Annotations.of(scope).addWarningV2(
    DATA_CAPTURE_STORES_PROMPTS,
    "dataCapture stores your users' prompts and the model's answers in S3 " +
      `(s3://${Token.isUnresolved(options.bucket.bucketName) ? 'BUCKET' : options.bucket.bucketName}/${prefix}): give the bucket a lifecycle rule that ` +
      'expires them (for example after 30 days) and restrict who can read it; `prefix-router trace import` needs only a few days of capture.',
  );
  const mode = options.mode ?? DataCaptureMode.INPUT_AND_OUTPUT;
  return {
    enableCapture: true,
    initialSamplingPercentage: options.samplingPercentage ?? 100,
    destinationS3Uri: `s3://${options.bucket.bucketName}${prefix === '' ? '' : `/${prefix}`}`,
    kmsKeyId: options.encryptionKey?.keyArn,
    captureOptions:
      mode === DataCaptureMode.INPUT
        ? [{ captureMode: 'Input' }]
        : [{ captureMode: 'Input' }, { captureMode: 'Output' }],
    captureContentTypeHeader: { jsonContentTypes: options.jsonContentTypes ?? DEFAULT_JSON_CONTENT_TYPES },
  };
}
