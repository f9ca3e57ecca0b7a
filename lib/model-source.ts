import {
  aws_iam as iam,
  aws_kms as kms,
  aws_s3 as s3,
  aws_sagemaker as sagemaker,
  aws_secretsmanager as secretsmanager,
  Token,
} from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { grantScoped } from './private/grants';
import { validateBucketEncryption } from './private/s3-encryption';
import { S3_LIST_ACTIONS, S3_READ_OBJECT_ACTIONS } from './private/iam-actions';
import { ProblemCollector, show } from './private/validation';

/** Where SageMaker mounts model data inside the container. */
export const MODEL_MOUNT_PATH = '/opt/ml/model';

/** Which kind of model source. */
export enum ModelSourceKind {
  /** The container downloads the weights from the Hugging Face Hub at start-up. */
  HUGGING_FACE = 'HUGGING_FACE',
  /** SageMaker copies uncompressed weights from S3 to `/opt/ml/model` before the container starts. */
  S3 = 'S3',
}

/** Options of `ModelSource.huggingFace()`. */
export interface HuggingFaceModelOptions {
  /**
   * A Secrets Manager secret holding a Hugging Face access token, for gated models such as Llama.
   *
   * How the token reaches the container: SageMaker has no secret references in container environment
   * variables, and the vLLM DLC reads only a plain `HF_TOKEN` variable. The construct therefore puts a
   * CloudFormation dynamic reference (`{{resolve:secretsmanager:...}}`) into `HF_TOKEN`. The synthesized
   * template and the cloud assembly never contain the token; CloudFormation resolves it at deploy time with the
   * deploying principal's permissions. The resolved token is then stored in the SageMaker model's environment,
   * where any principal allowed `sagemaker:DescribeModel` can read it, and a rotated secret reaches the
   * endpoint only with the next deployment that replaces the model. The construct warns about this
   * (acknowledgeable); for production, stage the weights in S3 and use `ModelSource.s3()`, which needs no token
   * at run time.
   *
   * @default - no token (public models only)
   */
  readonly tokenSecret?: secretsmanager.ISecret;

  /**
   * The JSON key of the token when the secret is a JSON object, e.g. `HF_TOKEN`.
   *
   * @default - the whole secret string is the token
   */
  readonly tokenSecretField?: string;

  /**
   * A branch, tag or commit of the model repository. Pin a commit for reproducible deployments.
   *
   * @default - the repository's default branch at container start-up
   */
  readonly revision?: string;
}

/** Options of `ModelSource.s3()`. */
export interface S3ModelOptions {
  /**
   * The KMS key the bucket's objects are encrypted with (SSE-KMS). The execution role may decrypt with it. Needed
   * for a bucket imported with `Bucket.fromBucketName()` and friends: an imported bucket does not know its key, and
   * without a decrypt grant SageMaker fails to copy the model only at deploy time.
   *
   * @default - the bucket's own `encryptionKey` (known for a bucket created in this app)
   */
  readonly encryptionKey?: kms.IKey;

  /**
   * Declares that an imported bucket's objects use SSE-S3 (or the AWS-managed `aws/s3` key), which needs no grant.
   * An imported bucket needs either this or `encryptionKey`, so that an SSE-KMS bucket cannot go without its grant.
   *
   * @default false
   */
  readonly s3ManagedEncryption?: boolean;
}

/** What a model source contributes to the model, once bound. */
export interface ModelSourceConfig {
  /** Model data SageMaker copies to `/opt/ml/model`, if any. */
  readonly modelDataSource?: sagemaker.CfnModel.ModelDataSourceProperty;
  /** Hugging Face repository id, when the container downloads the model. */
  readonly huggingFaceModelId?: string;
  /** Hugging Face revision, if pinned. */
  readonly huggingFaceRevision?: string;
  /** `HF_TOKEN` value: a CloudFormation dynamic reference, never the token itself. */
  readonly huggingFaceToken?: string;
}

/** Where the model weights come from. */
export abstract class ModelSource {
  /**
   * A model on the Hugging Face Hub, downloaded by the container at start-up (needs internet access, so not
   * with `enableNetworkIsolation`).
   *
   * @param modelId repository id such as `meta-llama/Llama-3.1-70B-Instruct`
   */
  public static huggingFace(modelId: string, options: HuggingFaceModelOptions = {}): ModelSource {
    return new HuggingFaceModelSource(modelId, options);
  }

  /**
   * Uncompressed model files (Hugging Face layout: `config.json`, tokenizer, `*.safetensors`) under an S3 prefix.
   * Rendered as `ModelDataSource.S3DataSource` with `S3DataType: S3Prefix` and `CompressionType: None`, so
   * SageMaker copies the files straight to `/opt/ml/model` without a tarball. The execution role may list and
   * read exactly this prefix, and decrypt with the bucket's KMS key. The recommended source for production: no
   * token or download at start-up, works with network isolation.
   *
   * An imported bucket must say how it is encrypted: `{ encryptionKey }` for SSE-KMS or
   * `{ s3ManagedEncryption: true }` for SSE-S3; synth fails otherwise.
   *
   * @param prefix key prefix without leading slash, e.g. `models/llama-3.1-70b-instruct`; a trailing slash is optional
   */
  public static s3(bucket: s3.IBucket, prefix: string, options: S3ModelOptions = {}): ModelSource {
    return new S3ModelSource(bucket, prefix, options);
  }

  /** Which kind of source. */
  public abstract readonly kind: ModelSourceKind;

  /** True when the container itself downloads the model (needs network access). */
  public get downloadsAtStartup(): boolean {
    return this.kind === ModelSourceKind.HUGGING_FACE;
  }

  /** True when a secret is resolved into the container environment at deploy time (see `tokenSecret`). */
  public get resolvesSecretIntoEnvironment(): boolean {
    return false;
  }

  /** @internal */
  public abstract _validate(problems: ProblemCollector): void;

  /**
   * The Hugging Face model id when the source names one (the construct looks up its attention heads).
   *
   * @internal
   */
  public _huggingFaceModelId(): string | undefined {
    return undefined;
  }

  /**
   * Grants the role what it needs to read the model and returns what goes into the container definition.
   *
   * @param scope the construct that uses the model (the endpoint)
   * @param grantee the execution role
   */
  public abstract bind(scope: Construct, grantee: iam.IGrantable): ModelSourceConfig;
}

/** Hugging Face repository ids: `name` or `organization/name`, letters, digits, `-`, `_`, `.`. */
const HF_REPO_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,95}(\/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?$/;

class HuggingFaceModelSource extends ModelSource {
  public readonly kind = ModelSourceKind.HUGGING_FACE;

  constructor(
    public readonly modelId: string,
    private readonly options: HuggingFaceModelOptions,
  ) {
    super();
  }

  public _validate(problems: ProblemCollector): void {
    if (Token.isUnresolved(this.modelId)) return;
    if (this.modelId.trim() === '') {
      problems.add("model.modelId must not be empty (got '')");
    } else if (!HF_REPO_ID.test(this.modelId)) {
      problems.add(
        `model.modelId must be a Hugging Face repository id like 'organization/model-name' (got ${show(this.modelId)})`,
      );
    }
    const field = this.options.tokenSecretField;
    if (field !== undefined && !Token.isUnresolved(field)) {
      if (this.options.tokenSecret === undefined) {
        problems.add(
          `model.tokenSecretField needs model.tokenSecret (got tokenSecretField ${show(field)} without a secret)`,
        );
      } else if (field.trim() === '') {
        problems.add("model.tokenSecretField must not be empty (got '')");
      }
    }
    const revision = this.options.revision;
    if (revision !== undefined && !Token.isUnresolved(revision) && revision.trim() === '') {
      problems.add("model.revision must not be empty (got '')");
    }
  }

  public override _huggingFaceModelId(): string | undefined {
    return Token.isUnresolved(this.modelId) ? undefined : this.modelId;
  }

  public override get resolvesSecretIntoEnvironment(): boolean {
    return this.options.tokenSecret !== undefined;
  }

  public bind(_scope: Construct, _grantee: iam.IGrantable): ModelSourceConfig {
    const secret = this.options.tokenSecret;
    let token: string | undefined;
    if (secret) {
      const value = this.options.tokenSecretField
        ? secret.secretValueFromJson(this.options.tokenSecretField)
        : secret.secretValue;
      // A dynamic reference: CloudFormation substitutes it at deploy time; the template only holds the reference.
      token = value.unsafeUnwrap();
    }
    return {
      huggingFaceModelId: this.modelId,
      huggingFaceRevision: this.options.revision,
      huggingFaceToken: token,
    };
  }
}

class S3ModelSource extends ModelSource {
  public readonly kind = ModelSourceKind.S3;

  constructor(
    public readonly bucket: s3.IBucket,
    public readonly prefix: string,
    private readonly options: S3ModelOptions,
  ) {
    super();
  }

  /** The key objects are decrypted with: the given one, else the bucket's own. */
  private get encryptionKey(): kms.IKey | undefined {
    return this.options.encryptionKey ?? this.bucket.encryptionKey;
  }

  public _validate(problems: ProblemCollector): void {
    validateBucketEncryption('model', 'ModelSource.s3(bucket, prefix', this.bucket, this.options, problems);
    if (Token.isUnresolved(this.prefix)) return;
    if (this.prefix.startsWith('/')) {
      problems.add(`model.prefix must not start with '/' (got ${show(this.prefix)})`);
    } else if (this.normalizedPrefix === '') {
      problems.add(`model.prefix must name a folder of model files, not the bucket root (got ${show(this.prefix)})`);
    }
  }

  /** The prefix without trailing slashes: `models/llama`. */
  private get normalizedPrefix(): string {
    return Token.isUnresolved(this.prefix) ? this.prefix : this.prefix.replace(/\/+$/, '');
  }

  public bind(_scope: Construct, grantee: iam.IGrantable): ModelSourceConfig {
    const prefix = this.normalizedPrefix;
    grantScoped(grantee, {
      actions: S3_READ_OBJECT_ACTIONS,
      resources: [this.bucket.arnForObjects(`${prefix}/*`)],
      wildcardReason:
        'SageMaker copies every file under the model prefix (weights are sharded into many files); the role may read only that prefix.',
    });
    grantScoped(grantee, {
      actions: S3_LIST_ACTIONS,
      resources: [this.bucket.bucketArn],
      conditions: { StringLike: { 's3:prefix': [`${prefix}/*`] } },
    });
    this.encryptionKey?.grantDecrypt(grantee);
    return {
      modelDataSource: {
        s3DataSource: {
          // S3Prefix data must be addressed as a folder: the URI ends with '/'.
          s3Uri: `s3://${this.bucket.bucketName}/${prefix}/`,
          s3DataType: 'S3Prefix',
          compressionType: 'None',
        },
      },
    };
  }
}
