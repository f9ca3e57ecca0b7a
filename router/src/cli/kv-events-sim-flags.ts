import { Option } from 'commander';
import { ConfigError } from '../common/config-error';
import {
  KV_EVENTS_DELAY_RANGE_MS,
  KV_EVENTS_LOSS_RANGE,
  type SimulatedKvEventSettings,
} from '../sim/simulated-kv-events';
import { numberFlag, textFlag } from './flag-values';

/**
 * `simulate --kv-events on|off`, `--kv-events-delay-ms` and `--kv-events-loss`: the simulated routers follow the
 * engine models' KV cache events (sim/simulated-kv-events.ts), as `serve --kv-events` follows vLLM's. Declared here so
 * the command adds one line per option.
 */

const MODES = ['on', 'off'] as const;
const LOSS_PERCENT = { min: KV_EVENTS_LOSS_RANGE.min * 100, max: KV_EVENTS_LOSS_RANGE.max * 100 } as const;

export function kvEventsSimOptions(): Option[] {
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
