import { Token } from 'aws-cdk-lib';

/** Catalog entries by name; filled while the class below initialises its static members. */
const CATALOG = new Map<string, InstanceType>();

/** What the construct needs to know about a SageMaker instance type. */
export interface InstanceTypeSpec {
  /**
   * GPUs on one instance. The default tensor parallel size, and the check that a tensor parallel size
   * divides the instance.
   *
   * @default - unknown: `engine.tensorParallelSize` must then be given
   */
  readonly gpuCount?: number;

  /** GPU model, for documentation and error messages, e.g. `H100 80GB`. @default - unknown */
  readonly gpuModel?: string;

  /**
   * Whether the instance has local NVMe instance storage. SageMaker rejects a `KmsKeyId` (and a volume size) on
   * such types: their storage is encrypted by the instance's hardware module.
   *
   * @default false
   */
  readonly hasLocalNvme?: boolean;

  /**
   * Memory of one instance, in GiB (the EC2 instance type's memory). Inference components check that their copies'
   * `minMemoryPerCopy` fits in it; SageMaker keeps part of it for the host, so fitting is necessary, not sufficient.
   *
   * @default - unknown: the memory check is skipped
   */
  readonly memoryGiB?: number;
}

/**
 * A SageMaker hosting instance type with the facts the construct validates against.
 *
 * The catalog covers the GPU types people serve vLLM on; use `InstanceType.of()` for any other type. GPU counts and
 * memory are those of the EC2 instance types of the same name (https://aws.amazon.com/ec2/instance-types/, accelerated
 * computing).
 */
export class InstanceType {
  /** 8 × NVIDIA H100 80 GB, 8 × 3.84 TB NVMe. The default: Llama 3.1 70B BF16 fits with TP 8 and ~1.3 M tokens of KV cache. */
  public static readonly ML_P5_48XLARGE = InstanceType.catalog('ml.p5.48xlarge', 8, 'H100 80GB', 2048);
  /** 8 × NVIDIA H200 141 GB, NVMe. */
  public static readonly ML_P5E_48XLARGE = InstanceType.catalog('ml.p5e.48xlarge', 8, 'H200 141GB', 2048);
  /** 8 × NVIDIA H200 141 GB, NVMe, faster networking than p5e. */
  public static readonly ML_P5EN_48XLARGE = InstanceType.catalog('ml.p5en.48xlarge', 8, 'H200 141GB', 2048);
  /** 8 × NVIDIA B200 179 GB, NVMe. */
  public static readonly ML_P6_B200_48XLARGE = InstanceType.catalog('ml.p6-b200.48xlarge', 8, 'B200 179GB', 2048);
  /** 8 × NVIDIA A100 40 GB, NVMe. */
  public static readonly ML_P4D_24XLARGE = InstanceType.catalog('ml.p4d.24xlarge', 8, 'A100 40GB', 1152);
  /** 8 × NVIDIA A100 80 GB, NVMe. */
  public static readonly ML_P4DE_24XLARGE = InstanceType.catalog('ml.p4de.24xlarge', 8, 'A100 80GB', 1152);

  /** 1 × NVIDIA A10G 24 GB, NVMe. */
  public static readonly ML_G5_XLARGE = InstanceType.catalog('ml.g5.xlarge', 1, 'A10G 24GB', 16);
  /** 1 × NVIDIA A10G 24 GB, NVMe. */
  public static readonly ML_G5_2XLARGE = InstanceType.catalog('ml.g5.2xlarge', 1, 'A10G 24GB', 32);
  /** 1 × NVIDIA A10G 24 GB, NVMe. */
  public static readonly ML_G5_4XLARGE = InstanceType.catalog('ml.g5.4xlarge', 1, 'A10G 24GB', 64);
  /** 1 × NVIDIA A10G 24 GB, NVMe. */
  public static readonly ML_G5_8XLARGE = InstanceType.catalog('ml.g5.8xlarge', 1, 'A10G 24GB', 128);
  /** 1 × NVIDIA A10G 24 GB, NVMe. */
  public static readonly ML_G5_16XLARGE = InstanceType.catalog('ml.g5.16xlarge', 1, 'A10G 24GB', 256);
  /** 4 × NVIDIA A10G 24 GB, NVMe. */
  public static readonly ML_G5_12XLARGE = InstanceType.catalog('ml.g5.12xlarge', 4, 'A10G 24GB', 192);
  /** 4 × NVIDIA A10G 24 GB, NVMe. */
  public static readonly ML_G5_24XLARGE = InstanceType.catalog('ml.g5.24xlarge', 4, 'A10G 24GB', 384);
  /** 8 × NVIDIA A10G 24 GB, NVMe. */
  public static readonly ML_G5_48XLARGE = InstanceType.catalog('ml.g5.48xlarge', 8, 'A10G 24GB', 768);

  /** 1 × NVIDIA L4 24 GB, NVMe. */
  public static readonly ML_G6_XLARGE = InstanceType.catalog('ml.g6.xlarge', 1, 'L4 24GB', 16);
  /** 1 × NVIDIA L4 24 GB, NVMe. */
  public static readonly ML_G6_2XLARGE = InstanceType.catalog('ml.g6.2xlarge', 1, 'L4 24GB', 32);
  /** 1 × NVIDIA L4 24 GB, NVMe. */
  public static readonly ML_G6_4XLARGE = InstanceType.catalog('ml.g6.4xlarge', 1, 'L4 24GB', 64);
  /** 1 × NVIDIA L4 24 GB, NVMe. */
  public static readonly ML_G6_8XLARGE = InstanceType.catalog('ml.g6.8xlarge', 1, 'L4 24GB', 128);
  /** 1 × NVIDIA L4 24 GB, NVMe. */
  public static readonly ML_G6_16XLARGE = InstanceType.catalog('ml.g6.16xlarge', 1, 'L4 24GB', 256);
  /** 4 × NVIDIA L4 24 GB, NVMe. */
  public static readonly ML_G6_12XLARGE = InstanceType.catalog('ml.g6.12xlarge', 4, 'L4 24GB', 192);
  /** 4 × NVIDIA L4 24 GB, NVMe. */
  public static readonly ML_G6_24XLARGE = InstanceType.catalog('ml.g6.24xlarge', 4, 'L4 24GB', 384);
  /** 8 × NVIDIA L4 24 GB, NVMe. */
  public static readonly ML_G6_48XLARGE = InstanceType.catalog('ml.g6.48xlarge', 8, 'L4 24GB', 768);

  /** 1 × NVIDIA L40S 48 GB, NVMe. */
  public static readonly ML_G6E_XLARGE = InstanceType.catalog('ml.g6e.xlarge', 1, 'L40S 48GB', 32);
  /** 1 × NVIDIA L40S 48 GB, NVMe. */
  public static readonly ML_G6E_2XLARGE = InstanceType.catalog('ml.g6e.2xlarge', 1, 'L40S 48GB', 64);
  /** 1 × NVIDIA L40S 48 GB, NVMe. */
  public static readonly ML_G6E_4XLARGE = InstanceType.catalog('ml.g6e.4xlarge', 1, 'L40S 48GB', 128);
  /** 1 × NVIDIA L40S 48 GB, NVMe. */
  public static readonly ML_G6E_8XLARGE = InstanceType.catalog('ml.g6e.8xlarge', 1, 'L40S 48GB', 256);
  /** 1 × NVIDIA L40S 48 GB, NVMe. */
  public static readonly ML_G6E_16XLARGE = InstanceType.catalog('ml.g6e.16xlarge', 1, 'L40S 48GB', 512);
  /** 4 × NVIDIA L40S 48 GB, NVMe. */
  public static readonly ML_G6E_12XLARGE = InstanceType.catalog('ml.g6e.12xlarge', 4, 'L40S 48GB', 384);
  /** 4 × NVIDIA L40S 48 GB, NVMe. */
  public static readonly ML_G6E_24XLARGE = InstanceType.catalog('ml.g6e.24xlarge', 4, 'L40S 48GB', 768);
  /** 8 × NVIDIA L40S 48 GB, NVMe. */
  public static readonly ML_G6E_48XLARGE = InstanceType.catalog('ml.g6e.48xlarge', 8, 'L40S 48GB', 1536);

  /**
   * Any SageMaker hosting instance type, e.g. `InstanceType.of('ml.g7e.12xlarge', { gpuCount: 4, hasLocalNvme: true })`.
   * A name from the catalog returns the catalog entry unless `spec` overrides it.
   */
  public static of(name: string, spec: InstanceTypeSpec = {}): InstanceType {
    const known = CATALOG.get(name);
    if (
      known &&
      spec.gpuCount === undefined &&
      spec.gpuModel === undefined &&
      spec.hasLocalNvme === undefined &&
      spec.memoryGiB === undefined
    ) {
      return known;
    }
    return new InstanceType(name, {
      gpuCount: spec.gpuCount ?? known?.gpuCount,
      gpuModel: spec.gpuModel ?? known?.gpuModel,
      hasLocalNvme: spec.hasLocalNvme ?? known?.hasLocalNvme ?? false,
      memoryGiB: spec.memoryGiB ?? known?.memoryGiB,
    });
  }

  /** Every type the catalog knows, in declaration order. */
  public static catalogEntries(): InstanceType[] {
    return [...CATALOG.values()];
  }

  private static catalog(name: string, gpuCount: number, gpuModel: string, memoryGiB: number): InstanceType {
    const type = new InstanceType(name, { gpuCount, gpuModel, hasLocalNvme: true, memoryGiB });
    CATALOG.set(name, type);
    return type;
  }

  /** GPUs per instance, or undefined when unknown. */
  public readonly gpuCount?: number;
  /** GPU model, or undefined when unknown. */
  public readonly gpuModel?: string;
  /** Whether SageMaker treats the type as having local NVMe storage (no `KmsKeyId`). */
  public readonly hasLocalNvme: boolean;
  /** Memory of one instance in GiB, or undefined when unknown. */
  public readonly memoryGiB?: number;

  private constructor(
    public readonly name: string,
    spec: InstanceTypeSpec,
  ) {
    this.gpuCount = spec.gpuCount;
    this.gpuModel = spec.gpuModel;
    this.hasLocalNvme = spec.hasLocalNvme ?? false;
    this.memoryGiB = spec.memoryGiB;
  }

  /** True when the name is a deploy-time token. */
  public get isUnresolved(): boolean {
    return Token.isUnresolved(this.name);
  }

  public toString(): string {
    return this.name;
  }
}
