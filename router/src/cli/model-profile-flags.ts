/**
 * `--model HF_ID` / `--model-config FILE` with `--instance-type TYPE`: the engine profile derived for that model on
 * that instance type (emulator/derived-profile.ts), shared by `simulate`, `plan`, `emulate` and `demo`. An explicit
 * `--profile` wins; a profile made for other instance types than `--instance-type` is refused rather than priced
 * or simulated as another machine.
 */
import type { Command } from 'commander';
import { ConfigError } from '../common/config-error';
import { deriveFor, type DerivedProfile } from '../emulator/derived-profile';
import type { EngineProfile } from '../emulator/engine-profile';
import { INSTANCE_GPUS } from '../emulator/gpu-catalog';
import { loadModelConfigFile } from '../emulator/model-config-file';
import { profileFlag } from './flag-values';

/** The instance types each shipped profile describes (its description names them); others describe none in particular. */
export const PROFILE_INSTANCE_TYPES: Readonly<Record<string, readonly string[]>> = {
  'p5-llama-3.1-70b': ['ml.p5.48xlarge'],
  'p5e-llama-3.1-70b': ['ml.p5e.48xlarge', 'ml.p5en.48xlarge'],
  'p4d-llama-3.1-70b': ['ml.p4d.24xlarge'],
  'p4de-llama-3.1-70b': ['ml.p4de.24xlarge'],
};

/** Adds the flags; `withModel: false` where the command already has a `--model` (emulate's served name). */
export function addModelProfileFlags(command: Command, withModel = true): Command {
  if (withModel)
    command.option('--model <hf-id>', 'derive the engine profile for this Hugging Face model (with --instance-type)');
  return command
    .option('--model-config <file>', "derive the engine profile from this model's config.json (with --instance-type)")
    .option(
      '--instance-type <type>',
      `the SageMaker instance type one instance stands for: ${Object.keys(INSTANCE_GPUS).join(', ')}`,
    );
}

/** What the flags chose: the profile every instance without its own runs, and the derivation when there is one. */
export interface ModelProfileChoice {
  readonly profile: EngineProfile;
  readonly derived?: DerivedProfile;
  readonly instanceType?: string;
}

function text(flags: Record<string, unknown>, ...keys: string[]): string | undefined {
  const value = keys.map((k) => flags[k]).find((v) => v !== undefined);
  return typeof value === 'string' ? value : undefined;
}

/**
 * Resolves `--profile`, `--model`, `--model-config` and `--instance-type` into one profile. `modelIsServedName`:
 * emulate's `--model` names the served model unless `--instance-type` asks for a derivation.
 */
export function modelProfileFromFlags(
  flags: Record<string, unknown>,
  defaultProfileName: string,
  modelIsServedName = false,
  command = 'plan',
): ModelProfileChoice {
  const profileName = text(flags, 'profile');
  const instanceType = text(flags, 'instanceType', 'instance-type');
  const modelConfig = text(flags, 'modelConfig', 'model-config');
  const model = modelIsServedName && instanceType === undefined ? undefined : text(flags, 'model');
  if (profileName !== undefined) {
    const profile = profileFlag('profile', profileName);
    checkProfileInstanceType(profile, instanceType);
    return { profile, ...(instanceType !== undefined ? { instanceType } : {}) };
  }
  if (model === undefined && modelConfig === undefined) {
    const profile = profileFlag('profile', defaultProfileName);
    if (instanceType !== undefined && !(PROFILE_INSTANCE_TYPES[defaultProfileName] ?? []).includes(instanceType))
      throw new ConfigError([
        `--instance-type ${instanceType}: no profile describes it (the default ${defaultProfileName} is ${(PROFILE_INSTANCE_TYPES[defaultProfileName] ?? ['no instance type']).join(', ')}); ` +
          `name the model it serves: prefix-router ${command} --model Qwen/Qwen2.5-7B-Instruct --instance-type ${instanceType} … (or --model-config config.json, or a --profile made for it)`,
      ]);
    return { profile, ...(instanceType !== undefined ? { instanceType } : {}) };
  }
  if (instanceType === undefined)
    throw new ConfigError([
      `--${model !== undefined ? 'model' : 'model-config'} needs --instance-type: the profile is derived for a model on an instance type (${Object.keys(INSTANCE_GPUS).join(', ')})`,
    ]);
  const architecture = modelConfig !== undefined ? loadModelConfigFile(modelConfig, model) : model!;
  const derived = deriveFor(architecture, instanceType);
  return { profile: derived.profile, derived, instanceType };
}

/** Refuses a shipped profile made for other instance types than the one asked for. */
function checkProfileInstanceType(profile: EngineProfile, instanceType: string | undefined): void {
  const describes = PROFILE_INSTANCE_TYPES[profile.name];
  if (instanceType === undefined || describes === undefined || describes.includes(instanceType)) return;
  throw new ConfigError([
    `--profile ${profile.name} describes ${describes.join(', ')}, not --instance-type ${instanceType}: it would simulate one machine and price another; ` +
      `derive one for ${instanceType} with --model HF_ID or --model-config config.json instead of --profile`,
  ]);
}
