#!/usr/bin/env bash
# Stages the build context of router/Dockerfile that the construct package (lib/) carries for
# VllmImage.withRouterSidecar(): exactly what the Dockerfile's installed-package branch needs, nothing else.
#   DEST/package.json           the router package's name, version and exact runtime dependencies
#   DEST/npm-shrinkwrap.json    every runtime dependency, transitive ones included, at the version and integrity
#                               the repository's package-lock.json pins (the image's build stage runs `npm ci` on it,
#                               so an image built from the package installs exactly what the checkout was tested with)
#   DEST/router/{Dockerfile,entrypoint.sh,image-build.sh}
#   DEST/dist/bin, DEST/dist/router   the compiled CLI and router (router/tsconfig.build.json), no maps or .d.ts
# The router's runtime dependencies are resolved inside the image, so a CDK app that installs the construct never
# installs them. Usage: stage-sidecar-context.sh DEST (lib's prepack stages lib/sidecar; postpack removes it).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dest=${1:?usage: stage-sidecar-context.sh DEST}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
rm -rf "${dest:?}"/*
(cd "$root" && rm -rf router/dist && node node_modules/typescript/bin/tsc -p router/tsconfig.build.json)
mkdir -p "$dest/router" "$dest/dist"
cp -R "$root/router/dist/bin" "$root/router/dist/router" "$dest/dist/"
find "$dest/dist" \( -name '*.map' -o -name '*.d.ts' \) -delete
cp "$root/router/Dockerfile" "$root/router/entrypoint.sh" "$root/router/image-build.sh" "$dest/router/"
chmod 755 "$dest/router/entrypoint.sh"
node -e '
const pkg = require(process.argv[1]);
const staged = { name: pkg.name, version: pkg.version, private: true, license: pkg.license, engines: pkg.engines, dependencies: pkg.dependencies };
process.stdout.write(JSON.stringify(staged, null, 2) + "\n");
' "$root/router/package.json" >"$dest/package.json"
# The shrinkwrap: the repository's lock pruned to the staged package's runtime closure, offline (it resolves nothing:
# a dependency the lock does not pin fails here instead of being resolved afresh), then checked entry by entry.
cp "$root/package-lock.json" "$dest/package-lock.json"
(cd "$dest" && npm install --package-lock-only --ignore-scripts --no-audit --no-fund --offline >/dev/null)
mv "$dest/package-lock.json" "$dest/npm-shrinkwrap.json"
node -e '
const [staged, repo] = process.argv.slice(1).map((f) => require(f));
const entries = Object.entries(staged.packages).filter(([path]) => path !== "");
const wrong = entries.filter(([path, e]) => repo.packages[path] === undefined || repo.packages[path].version !== e.version || repo.packages[path].integrity !== e.integrity || e.integrity === undefined);
if (entries.length === 0 || wrong.length > 0) {
  console.error(`stage-sidecar-context.sh: the shrinkwrap differs from package-lock.json at ${wrong.map(([p]) => p).join(", ") || "(no entries)"}`);
  process.exit(1);
}
' "$dest/npm-shrinkwrap.json" "$root/package-lock.json"
