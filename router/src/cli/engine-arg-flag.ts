import { Option } from 'commander';
import { ENGINE_ARGS, allowedText, parseEngineArgs, type EngineArgs } from '../emulator/engine-args';
import { collect } from './flag-values';

/**
 * `--engine-arg NAME=VALUE` (repeatable, vLLM's flag names) on simulate, plan, emulate and demo: the scheduler
 * settings every emulated engine runs with, over its profile's. Names, ranges and relations live in
 * emulator/engine-args.ts (`fleetWithEngineArgs` applies them); this file only declares and reads the flag.
 */

const HELP = `vLLM engine argument for every emulated engine, repeatable: ${ENGINE_ARGS.map(
  (s) => `${s.flag} (${allowedText(s)})`,
).join(', ')}`;

/** The `--engine-arg` option, for a command's `.addOption(engineArgOption())`. */
export function engineArgOption(): Option {
  return new Option('--engine-arg <NAME=VALUE>', HELP).argParser(collect);
}

/** The command's `--engine-arg` values, checked; a ConfigError lists every problem with the allowed range. */
export function engineArgsFlag(flags: Readonly<Record<string, unknown>>): EngineArgs {
  const raw = flags.engineArg ?? flags['engine-arg'];
  if (raw === undefined) return {};
  const texts = (Array.isArray(raw) ? raw : [raw]).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  return parseEngineArgs(texts);
}
