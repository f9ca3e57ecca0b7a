import pino, { type DestinationStream, type Logger } from 'pino';
import type { LogLevel } from '../config';

/**
 * JSON logs (pino). Log lines carry ids, sizes, statuses and timings, never prompt text or the tenant header
 * value: only what the router itself decided.
 */
export function createRouterLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const options = { level, base: { service: 'prefix-router' }, timestamp: pino.stdTimeFunctions.isoTime };
  return destination === undefined ? pino(options) : pino(options, destination);
}

export type { Logger };
