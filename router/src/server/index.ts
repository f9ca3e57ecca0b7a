export {
  startRouter,
  startRouterWithConfig,
  PrefixRouter,
  type RunningRouter,
  type RouterRuntime,
  type BackendStats,
  type ObservedStats,
} from './prefix-router';
export { INSTANCE_HEADER, DECISION_HEADER, DECISION_TIME_HEADER, PRODUCTION_VARIANT } from './proxy';
export type { HealthState } from './backend';
export { createRouterLogger } from './logger';
export type { RouterOptions, RouterConfig, HealthCheckOptions, LimitOptions, LogLevel } from '../config';
export { RouterConfigError, ROUTER_DEFAULTS, resolveRouterConfig } from '../config';
export {
  SessionAffinity,
  parseNewSessionHeader,
  SESSION_ID_HEADER,
  NEW_SESSION_ID_HEADER,
  CLOSED_SESSION_ID_HEADER,
  NEW_SESSION,
} from './session-affinity';
