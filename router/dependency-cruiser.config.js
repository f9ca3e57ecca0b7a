/**
 * dependency-cruiser rules generated from the layer map (router/layers.js): one rule per folder forbids imports
 * of any router/src folder the map does not allow it. Paths match `router/src/<folder>/` anywhere in the path,
 * so test/router/layers.test.ts can cruise a throw-away tree with the same rules and see each forbidden import
 * reported. Run: npx depcruise --config router/dependency-cruiser.config.js router/src lib
 */
const { LAYERS, EXCEPTIONS } = require('./layers');

const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const folder = (name) => `(^|/)router/src/${escapeRegExp(name)}/`;

const layerRules = Object.entries(LAYERS).map(([from, allowed]) => {
  const forbidden = Object.keys(LAYERS).filter((other) => other !== from && !allowed.includes(other));
  const exceptions = EXCEPTIONS.filter((e) => e.from.startsWith(`router/src/${from}/`));
  return {
    name: `layer-${from}`,
    comment: `router/src/${from} may import only ${allowed.length === 0 ? 'nothing else in router/src' : allowed.join(', ')} (router/layers.js)`,
    severity: 'error',
    from: {
      path: folder(from),
      ...(exceptions.length > 0 ? { pathNot: exceptions.map((e) => `${escapeRegExp(e.from)}$`) } : {}),
    },
    to: { path: forbidden.length === 0 ? '^$' : `(^|/)router/src/(${forbidden.map(escape).join('|')})/` },
  };
});

const exceptionRules = EXCEPTIONS.map((e) => {
  const from = e.from.split('/')[2];
  const forbidden = Object.keys(LAYERS).filter(
    (other) => other !== from && !LAYERS[from].includes(other) && other !== e.to,
  );
  return {
    name: `layer-${from}-exception`,
    comment: `${e.from} may also import ${e.to}: ${e.reason}`,
    severity: 'error',
    from: { path: `${escapeRegExp(e.from)}$` },
    to: { path: `(^|/)router/src/(${forbidden.map(escape).join('|')})/` },
  };
});

module.exports = {
  forbidden: [
    ...layerRules,
    ...exceptionRules,
    {
      name: 'router-src-is-self-contained',
      comment: 'the router library never imports the CLI entry points, benchmarks, tests or examples',
      severity: 'error',
      from: { path: '(^|/)router/src/' },
      to: { path: '(^|/)(bin|test|examples|router/bench)/' },
    },
    {
      name: 'routing-loops-use-policy-capabilities',
      comment:
        "the server and the simulator route through core/routing-core.ts and a policy's optional capabilities (routingBlocks), never a particular policy's module; router/policy-imports.js checks the names they take through policy/index.ts's re-exports, which paths cannot show",
      severity: 'error',
      from: { path: '(^|/)router/src/(server|sim)/' },
      to: { path: '(^|/)router/src/policy/[^/]+-policy\\.ts$', pathNot: '(^|/)router/src/policy/routing-policy\\.ts$' },
    },
    {
      name: 'lib-is-standalone',
      comment: 'lib/ (the CDK constructs, a separate jsii package) never imports the router',
      severity: 'error',
      from: { path: '(^|/)lib/' },
      to: { path: '(^|/)router/' },
    },
    {
      name: 'no-circular',
      comment:
        'modules that import each other cannot be read, tested or moved one at a time; policy/ is exempt while its registry and routing-policy.ts still import each other (issue 25 removes that cycle)',
      severity: 'error',
      from: { path: '(^|/)router/src/', pathNot: '(^|/)router/src/policy/' },
      to: { circular: true },
    },
    {
      name: 'no-unresolvable',
      comment: 'an import that resolves to nothing hides an edge from every other rule',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.d\\.ts$' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
