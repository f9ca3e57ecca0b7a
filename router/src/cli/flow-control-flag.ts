import { Option } from 'commander';
import { ConfigError } from '../common/config-error';
import {
  FLOW_CONTROL_DEFAULTS,
  FLOW_CONTROL_RANGES,
  type FlowControlMode,
  type FlowControlSettings,
} from '../core/flow-control';
import { integerFlag } from './flag-values';

/**
 * `--flow-control on|off` on simulate: the router holds lower priority classes while their engine's predicted
 * prefill queue is above a bound (core/flow-control.ts). On by default; it changes nothing for requests without a
 * priority. Declared here so each command adds two lines.
 */

const MODES: readonly FlowControlMode[] = ['on', 'off'];

/** `--flow-control-bound`, for a command's `.addOption(flowControlBoundOption())`. */
export function flowControlBoundOption(): Option {
  const { min, max } = FLOW_CONTROL_RANGES.queuedPrefillBoundTokens;
  return new Option(
    '--flow-control-bound <tokens>',
    `predicted prefill tokens queued on the chosen engine above which lower classes wait, ${min}..${max} (default ${FLOW_CONTROL_DEFAULTS.queuedPrefillBoundTokens})`,
  );
}

/** The `--flow-control` option, for a command's `.addOption(flowControlOption())`. */
export function flowControlOption(): Option {
  return new Option(
    '--flow-control <on|off>',
    `hold requests with a priority above 0 at the router while the chosen engine has more than ${FLOW_CONTROL_DEFAULTS.queuedPrefillBoundTokens} prefill tokens queued (on by default; off: route them at once)`,
  );
}

/** The command's flow-control settings; a ConfigError names the flag and its choices. */
export function flowControlFlag(flags: Readonly<Record<string, unknown>>): FlowControlSettings {
  const raw = flags.flowControl ?? flags['flow-control'] ?? FLOW_CONTROL_DEFAULTS.mode;
  if (typeof raw !== 'string' || !(MODES as readonly string[]).includes(raw))
    throw new ConfigError([`--flow-control must be one of ${MODES.join(', ')} (got ${JSON.stringify(raw)})`]);
  const bound = flags.flowControlBound ?? flags['flow-control-bound'];
  const { min, max } = FLOW_CONTROL_RANGES.queuedPrefillBoundTokens;
  return {
    ...FLOW_CONTROL_DEFAULTS,
    mode: raw as FlowControlMode,
    ...(bound !== undefined
      ? {
          queuedPrefillBoundTokens: integerFlag(
            'flow-control-bound',
            typeof bound === 'string' ? bound : JSON.stringify(bound),
            min,
            max,
          ),
        }
      : {}),
  };
}
