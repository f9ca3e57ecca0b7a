/**
 * The server and the simulator import no particular policy (router/dependency-cruiser.config.js,
 * routing-loops-use-policy-capabilities), not even through policy/index.ts: dependency-cruiser sees an import of the
 * barrel, not which module each imported name comes from (its issues #649 and #938), and the barrel re-exports the
 * policy classes for the package's `/policy` entry point. This check follows each name server/ and sim/ import from
 * the barrel to the module that declares it (TypeScript's checker resolves the re-exports) and reports those declared
 * in a particular policy's module, and any namespace import or `export *` of the barrel, which hides the names.
 * `npm run check:layers` runs it after dependency-cruiser; test/router/layers.test.ts runs it on the real tree and
 * on a throw-away one. Run: node router/policy-imports.js [root]
 */
const { existsSync, readdirSync, readFileSync, statSync } = require('node:fs');
const { dirname, join, relative, resolve } = require('node:path');
const ts = require('typescript');

/** The folders that route through core/ and a policy's capabilities only. */
const ROUTING_LOOPS = ['server', 'sim'];
/** One policy's module: policy/<name>-policy.ts, except the interface every policy implements. */
const PARTICULAR_POLICY = /(^|\/)router\/src\/policy\/(?!routing-policy\.ts$)[^/]+-policy\.ts$/;

const slashes = (path) => path.split('\\').join('/');

/** Each name the barrel exports → the file that declares it. */
function barrelOrigins(barrel) {
  const program = ts.createProgram([barrel], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    types: [],
    noEmit: true,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(barrel));
  const origins = new Map();
  for (const symbol of moduleSymbol === undefined ? [] : checker.getExportsOfModule(moduleSymbol)) {
    const declared = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    const file = declared.declarations?.[0]?.getSourceFile().fileName;
    if (file !== undefined) origins.set(symbol.name, slashes(resolve(file)));
  }
  return origins;
}

function typeScriptFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return typeScriptFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The names an import or export statement takes from its module; '*' for a namespace import or `export *`. */
function takenNames(statement) {
  if (ts.isExportDeclaration(statement)) {
    const clause = statement.exportClause;
    if (clause === undefined || ts.isNamespaceExport(clause)) return ['*'];
    return clause.elements.map((e) => (e.propertyName ?? e.name).text);
  }
  const clause = statement.importClause;
  if (clause === undefined) return [];
  const names = clause.name === undefined ? [] : ['default'];
  const bindings = clause.namedBindings;
  if (bindings === undefined) return names;
  if (ts.isNamespaceImport(bindings)) return [...names, '*'];
  return [...names, ...bindings.elements.map((e) => (e.propertyName ?? e.name).text)];
}

/** Every name server/ or sim/ takes from policy/index.ts that a particular policy's module declares, in words. */
function particularPolicyImports(root) {
  const policyDir = resolve(root, 'router', 'src', 'policy');
  const barrel = join(policyDir, 'index.ts');
  if (!existsSync(barrel)) return [];
  const barrelPaths = new Set([policyDir, join(policyDir, 'index'), barrel]);
  let origins;
  const found = [];
  for (const loop of ROUTING_LOOPS) {
    for (const file of typeScriptFiles(join(root, 'router', 'src', loop))) {
      const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
      for (const statement of source.statements) {
        if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue;
        const specifier = statement.moduleSpecifier;
        if (specifier === undefined || !ts.isStringLiteral(specifier)) continue;
        if (!barrelPaths.has(resolve(dirname(file), specifier.text))) continue;
        const where = slashes(relative(root, file));
        for (const name of takenNames(statement)) {
          if (name === '*') {
            found.push(`${where} takes every name of policy/index.ts (* hides whether one is a particular policy)`);
            continue;
          }
          origins ??= barrelOrigins(barrel);
          const origin = origins.get(name);
          if (origin !== undefined && PARTICULAR_POLICY.test(origin))
            found.push(`${where} imports ${name} through policy/index.ts from ${slashes(relative(root, origin))}`);
        }
      }
    }
  }
  return found;
}

module.exports = { particularPolicyImports };

if (require.main === module) {
  const root = resolve(process.argv[2] ?? join(__dirname, '..'));
  const found = particularPolicyImports(root);
  for (const line of found) process.stderr.write(`error routing-loops-use-policy-capabilities: ${line}\n`);
  process.stdout.write(
    found.length === 0
      ? 'policy imports: server/ and sim/ take no particular policy through policy/index.ts\n'
      : `policy imports: ${found.length} violation(s)\n`,
  );
  process.exitCode = found.length === 0 ? 0 : 1;
}
