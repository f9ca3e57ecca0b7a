import { aws_kms as kms, aws_s3 as s3 } from 'aws-cdk-lib';
import { ProblemCollector, show } from './validation';

/**
 * An imported bucket does not know its encryption, and an SSE-KMS bucket without a decrypt grant fails only at deploy
 * time: a reader of S3 objects must name the key (`encryptionKey`) or declare SSE-S3 (`s3ManagedEncryption`).
 * Shared by model and adapter sources; `prop` names the prop in messages, `call` the factory call to fix it with.
 */
export function validateBucketEncryption(
  prop: string,
  call: string,
  bucket: s3.IBucket,
  options: { readonly encryptionKey?: kms.IKey; readonly s3ManagedEncryption?: boolean },
  problems: ProblemCollector,
): void {
  const { encryptionKey, s3ManagedEncryption } = options;
  if (encryptionKey && s3ManagedEncryption) {
    problems.add(
      `${prop}: encryptionKey and s3ManagedEncryption exclude each other; pass the key for SSE-KMS, or s3ManagedEncryption: true for SSE-S3 (got both)`,
    );
  } else if (!(bucket instanceof s3.Bucket) && !(encryptionKey ?? bucket.encryptionKey) && !s3ManagedEncryption) {
    problems.add(
      `${prop}: the bucket ${show(bucket.node.path)} is imported, so its encryption is unknown and an SSE-KMS bucket would get no decrypt grant; ` +
        `pass ${call}, { encryptionKey }) for SSE-KMS or { s3ManagedEncryption: true } for SSE-S3 (got neither)`,
    );
  }
}
