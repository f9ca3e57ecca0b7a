import type { BenchIo } from './bench-run';

/** Signals `ab` handles: the first stops the run and leads to the restore (or cleanup); later ones only say so. */
export const AB_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
export type AbSignal = (typeof AB_SIGNALS)[number];
export const SIGNAL_NUMBERS: Readonly<Record<AbSignal, number>> = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };

export interface AbSignalSources {
  /** Ctrl-C source (tests): aborting it acts as SIGINT. */
  readonly interrupt?: AbortSignal;
  /** Registers the signal handler (the CLI: SIGINT, SIGTERM, SIGHUP); returns its removal. */
  readonly onSignal?: (handler: (signal: AbSignal) => void) => () => void;
}

export interface AbSignalListener {
  /** Aborts at the first signal. */
  readonly signal: AbortSignal;
  /** The first signal caught, if any. */
  caught(): AbSignal | undefined;
  remove(): void;
}

/** Listens for the run's signals: the first aborts `signal` and prints `first`, each later one prints `again`. */
export function listenForAbSignals(
  sources: AbSignalSources,
  io: BenchIo,
  messages: { first: (name: AbSignal) => string; again: (name: AbSignal) => string },
): AbSignalListener {
  const interrupt = new AbortController();
  let caught: AbSignal | undefined;
  const onSignal = (name: AbSignal): void => {
    if (caught === undefined) {
      caught = name;
      io.stderr.write(`\n${messages.first(name)}\n`);
      interrupt.abort();
    } else io.stderr.write(`\n${messages.again(name)}\n`);
  };
  sources.interrupt?.addEventListener('abort', () => onSignal('SIGINT'), { once: true });
  if (sources.interrupt?.aborted) onSignal('SIGINT');
  const remove = sources.onSignal?.(onSignal) ?? io.onInterrupt?.(() => onSignal('SIGINT'));
  return { signal: interrupt.signal, caught: () => caught, remove: () => remove?.() };
}
