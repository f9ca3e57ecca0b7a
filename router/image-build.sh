#!/bin/sh
# The build stage of router/Dockerfile, run in the build context (the package root). A script rather than an inline
# RUN so that `npm run check:image-contexts` runs exactly these steps without Docker.
#   - a repository checkout (router/src present): install from package-lock.json, compile the CLI and router only;
#   - the staged context the construct package carries (sidecar/: compiled dist/, the router's package.json with
#     exact dependency versions and npm-shrinkwrap.json pinning every transitive one, no sources): use dist/ as shipped.
# Then replace node_modules with the runtime dependencies alone, from the lock (either file): the same versions and
# integrity hashes on every build.
set -eu
if [ -d router/src ]; then
  npm ci --ignore-scripts --no-audit --no-fund
  rm -rf dist
  npx tsc -p router/tsconfig.container.json
elif [ ! -f dist/bin/prefix-router.js ]; then
  echo "router/image-build.sh: the build context has neither router/src nor dist/bin/prefix-router.js; use the package root" >&2
  exit 1
fi
rm -rf node_modules
if [ ! -f package-lock.json ] && [ ! -f npm-shrinkwrap.json ]; then
  echo "router/image-build.sh: the build context has neither package-lock.json nor npm-shrinkwrap.json, so its dependencies would be resolved afresh; use the package root or the staged sidecar/ context" >&2
  exit 1
fi
npm ci --omit=dev --omit=peer --ignore-scripts --no-audit --no-fund
# npm workspaces link node_modules/<workspace> to its folder (../router), which the runtime stage does not copy.
find node_modules -maxdepth 1 -type l -delete
