import { Option } from 'commander';
import { ConfigError } from '../common/config-error';
import {
  KV_EVENTS_DELAY_RANGE_MS,
  KV_EVENTS_LOSS_RANGE,
  type SimulatedKvEventSettings,
} from '../sim/simulated-kv-events';
import { BYPASS_SHARE_RANGE, RESTART_DOWN_RANGE_MS, type EngineRestart } from '../sim/simulator';
import { integerFlag, numberFlag, textFlag } from './flag-values';

/**
 * What `simulate` models beyond routing, for asking what engine truth buys (issue 39): `--kv-events on|off`,
 * `--kv-events-delay-ms` and `--kv-events-loss` (the simulated routers follow the engine models' KV cache events,
 * sim/simulated-kv-events.ts, as `serve --kv-events` follows vLLM's); `--restart-at`, `--restart-instance` and
 * `--restart-down` (an engine restart, SimulationConfig.engineRestart); `--bypass` (traffic that reaches the engines
 * around the routers, SimulationConfig.bypassShare).
 */

const MODES = ['on', 'off'] as const;
const LOSS_PERCENT = { min: KV_EVENTS_LOSS_RANGE.min * 100, max: KV_EVENTS_LOSS_RANGE.max * 100 } as const;

const BYPASS_PERCENT = { min: BYPASS_SHARE_RANGE.min * 100, max: BYPASS_SHARE_RANGE.max * 100 } as const;
const RESTART_DOWN_SECONDS = { min: RESTART_DOWN_RANGE_MS.min / 1000, max: RESTART_DOWN_RANGE_MS.max / 1000 } as const;
/** Latest restart time a flag takes: a week of simulated time, as --duration. */
const MAX_RESTART_AT_SECONDS = 604_800;

export function simScenarioOptions(): Option[] {
  return [...kvEventsSimOptions(), ...restartOptions()];
}

function restartOptions(): Option[] {
  return [
    new Option(
      '--restart-at <seconds>',
      `an engine restarts at this simulated time, 0..${MAX_RESTART_AT_SECONDS}: it drops its requests (failed) and its prefix cache (default: no restart)`,
    ),
    new Option(
      '--restart-instance <n>',
      'with --restart-at: the index of the instance that restarts, 0 .. instances - 1 (default 0)',
    ),
    new Option(
      '--restart-down <seconds>',
      `with --restart-at: seconds health checks keep it out of the routers' sets, ${RESTART_DOWN_SECONDS.min}..${RESTART_DOWN_SECONDS.max} (default 0: the routers never see it leave)`,
    ),
    new Option(
      '--bypass <percent>',
      `share of the requests that reach a random engine without any router (clients that bypass it), ${BYPASS_PERCENT.min}..${BYPASS_PERCENT.max}; they fill caches and load engines but are not in the report (default 0)`,
    ),
  ];
}

/** The restart the flags ask for, or undefined; `instances` bounds the instance index. */
export function restartSimFlag(flags: Readonly<Record<string, unknown>>, instances: number): EngineRestart | undefined {
  const at = textFlag(flags, 'restartAt') ?? textFlag(flags, 'restart-at');
  const instance = textFlag(flags, 'restartInstance') ?? textFlag(flags, 'restart-instance');
  const down = textFlag(flags, 'restartDown') ?? textFlag(flags, 'restart-down');
  const index = integerFlag('restart-instance', instance ?? '0', 0, instances - 1);
  const downSeconds = numberFlag('restart-down', down ?? '0', RESTART_DOWN_SECONDS.min, RESTART_DOWN_SECONDS.max);
  if (at === undefined) {
    const given = [
      instance === undefined ? [] : ['--restart-instance'],
      down === undefined ? [] : ['--restart-down'],
    ].flat();
    if (given.length > 0) throw new ConfigError([`${given.join(' and ')} need --restart-at`]);
    return undefined;
  }
  const atSeconds = numberFlag('restart-at', at, 0, MAX_RESTART_AT_SECONDS);
  return { instance: index, atMs: atSeconds * 1000, downMs: downSeconds * 1000 };
}

/** The share of requests that bypass the routers (0 without --bypass). */
export function bypassSimFlag(flags: Readonly<Record<string, unknown>>): number {
  const raw = textFlag(flags, 'bypass');
  return raw === undefined ? 0 : numberFlag('bypass', raw, BYPASS_PERCENT.min, BYPASS_PERCENT.max) / 100;
}

function kvEventsSimOptions(): Option[] {
  const delay = KV_EVENTS_DELAY_RANGE_MS;
  return [
    new Option(
      '--kv-events <on|off>',
      "engine truth: every router follows the engines' KV cache events and cache-aware predicts hits from them, as serve --kv-events does (default off: the routers' own estimate)",
    ),
    new Option(
      '--kv-events-delay-ms <ms>',
      `with --kv-events on: time from the end of an engine step to its events' arrival at the routers, ${delay.min}..${delay.max} (default 0)`,
    ),
    new Option(
      '--kv-events-loss <percent>',
      `with --kv-events on: share of event batches each router loses, ${LOSS_PERCENT.min}..${LOSS_PERCENT.max} (default 0); a loss makes that engine unknown to that router (its estimate) until the engine restarts, as serve without a replay socket`,
    ),
  ];
}

/** The run's KV event settings, or undefined with --kv-events off; a ConfigError names the flag and its range. */
export function kvEventsSimFlag(flags: Readonly<Record<string, unknown>>): SimulatedKvEventSettings | undefined {
  const mode = textFlag(flags, 'kvEvents') ?? textFlag(flags, 'kv-events') ?? 'off';
  if (!(MODES as readonly string[]).includes(mode))
    throw new ConfigError([`--kv-events must be one of ${MODES.join(', ')} (got ${JSON.stringify(mode)})`]);
  const rawDelay = textFlag(flags, 'kvEventsDelayMs') ?? textFlag(flags, 'kv-events-delay-ms');
  const rawLoss = textFlag(flags, 'kvEventsLoss') ?? textFlag(flags, 'kv-events-loss');
  // Checked by the number rule whether or not events are on, so a bad value never passes unnoticed.
  const delayMs = numberFlag(
    'kv-events-delay-ms',
    rawDelay ?? '0',
    KV_EVENTS_DELAY_RANGE_MS.min,
    KV_EVENTS_DELAY_RANGE_MS.max,
  );
  const lossPercent = numberFlag('kv-events-loss', rawLoss ?? '0', LOSS_PERCENT.min, LOSS_PERCENT.max);
  if (mode === 'off') {
    const given = [
      rawDelay === undefined ? [] : ['--kv-events-delay-ms'],
      rawLoss === undefined ? [] : ['--kv-events-loss'],
    ].flat();
    if (given.length > 0) throw new ConfigError([`${given.join(' and ')} need --kv-events on`]);
    return undefined;
  }
  return { delayMs, lossRate: lossPercent / 100 };
}
