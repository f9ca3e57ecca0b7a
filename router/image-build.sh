#!/bin/sh
# The build stage of router/Dockerfile, run in the build context (the package root). A script rather than an inline
# RUN so that `npm run check:image-contexts` runs exactly these steps without Docker.
#   - a repository checkout (router/src present): install from package-lock.json, compile the CLI and router only;
#   - the installed npm package (compiled dist/, no sources, no package-lock.json): use dist/ as shipped.
# Then replace node_modules with the runtime dependencies alone.
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
if [ -f package-lock.json ]; then
  npm ci --omit=dev --omit=peer --ignore-scripts --no-audit --no-fund
else
  npm install --omit=dev --omit=peer --ignore-scripts --no-audit --no-fund --no-package-lock
fi
