/**
 * The router's layer map: for each folder of router/src, the folders it may import from. Read bottom-up:
 * protocol → policy/state → core → server/simulator → cli, with shared folders beside them (common under
 * everything; workload, report and feed shared by the simulator, the live benchmark and the A/B tool).
 * dependency-cruiser enforces it in `npm test` (router/dependency-cruiser.config.js, test/router/layers.test.ts);
 * docs/architecture.md explains it. A folder missing here fails the test: every new folder takes a place.
 */
const LAYERS = {
  common: [],
  protocol: ['common'],
  state: ['common', 'protocol'],
  policy: ['common', 'protocol', 'state'],
  // Engine KV cache events (vLLM's wire format): decoded by the subscriber, published by the emulator.
  'kv-events': ['common', 'protocol', 'state'],
  workload: ['common', 'state'],
  emulator: ['common', 'protocol', 'state', 'kv-events'],
  core: ['common', 'protocol', 'state', 'policy', 'kv-events'],
  config: ['common', 'protocol', 'policy', 'kv-events'],
  report: ['common', 'state', 'workload'],
  feed: ['common', 'protocol', 'workload', 'emulator'],
  server: ['common', 'protocol', 'state', 'policy', 'core', 'config', 'kv-events'],
  sim: [
    'common',
    'protocol',
    'state',
    'policy',
    'core',
    'config',
    'kv-events',
    'emulator',
    'workload',
    'report',
    'feed',
  ],
  benchmark: ['common', 'protocol', 'workload', 'report', 'feed'],
  aws: ['common', 'protocol', 'workload', 'report', 'benchmark'],
  container: ['common', 'protocol', 'config', 'server', 'kv-events'],
  'trace-import': ['common', 'protocol', 'state', 'policy', 'emulator', 'workload', 'report', 'aws'],
  plan: ['common', 'protocol', 'state', 'policy', 'config', 'emulator', 'workload', 'report', 'sim'],
  demo: ['common', 'protocol', 'policy', 'config', 'emulator', 'workload', 'report', 'benchmark', 'server', 'sim'],
  cli: [
    'common',
    'protocol',
    'state',
    'policy',
    'kv-events',
    'workload',
    'emulator',
    'core',
    'config',
    'report',
    'feed',
    'server',
    'sim',
    'benchmark',
    'aws',
    'container',
    'trace-import',
    'plan',
    'demo',
  ],
};

/** Imports allowed against the map, each with its reason (from: a file, to: a folder). */
const EXCEPTIONS = [
  {
    from: 'router/src/server/engine-truth.ts',
    to: 'emulator',
    reason:
      "`serve --tokenizer emulator` tokenizes requests by the emulator's own rule (emulator-request-tokenizer.ts), its one home",
  },
];

module.exports = { LAYERS, EXCEPTIONS };
