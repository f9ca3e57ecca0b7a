import { aws_kms as kms, aws_s3 as s3 } from 'aws-cdk-lib';

/** Which payloads SageMaker Data Capture stores (`CaptureOptions`). */
export enum DataCaptureMode {
  /** Requests only: enough for `prefix-router trace import`, which then takes output lengths from `max_tokens`. */
  INPUT = 'INPUT',
  /** Requests and responses: output lengths come from each response's `usage`. */
  INPUT_AND_OUTPUT = 'INPUT_AND_OUTPUT',
}

/**
 * SageMaker Data Capture for the endpoint (`DataCaptureConfig` of the endpoint configuration,
 * https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DataCaptureConfig.html): a sample of the requests
 * (and responses) written to S3 as JSON Lines under `s3://BUCKET/PREFIX/ENDPOINT/VARIANT/yyyy/mm/dd/hh/`, which
 * `prefix-router trace import` turns into a privacy-safe trace of your own traffic (docs/own-traffic.md).
 *
 * The captured payloads are your users' prompts and the model's answers: give the bucket a lifecycle rule that
 * expires them, and restrict who can read it (synth warns).
 */
export interface DataCaptureOptions {
  /** Bucket the captured requests are written to. The execution role is granted `s3:PutObject` under the prefix. */
  readonly bucket: s3.IBucket;

  /**
   * Key prefix inside the bucket (S3's safe characters: letters, digits and `! - _ . * ' ( ) /`).
   *
   * @default 'datacapture'
   */
  readonly prefix?: string;

  /**
   * Percentage of requests captured, an integer from 0 to 100 (`InitialSamplingPercentage`). Below 100, prefixes
   * that requests share with uncaptured ones are invisible to the import, which says so.
   *
   * @default 100
   */
  readonly samplingPercentage?: number;

  /**
   * Requests only, or requests and responses.
   *
   * @default DataCaptureMode.INPUT_AND_OUTPUT
   */
  readonly mode?: DataCaptureMode;

  /**
   * KMS key SageMaker encrypts the captured objects with (`KmsKeyId`); the execution role is granted
   * `kms:Encrypt` and `kms:GenerateDataKey` on it.
   *
   * @default - the bucket's default encryption
   */
  readonly encryptionKey?: kms.IKey;

  /**
   * Content types stored as JSON text rather than base64 (`CaptureContentTypeHeader.JsonContentTypes`); without
   * them SageMaker base64-encodes every payload. 1 to 10 `type/subtype` names.
   *
   * @default ['application/json']
   */
  readonly jsonContentTypes?: string[];
}
