#!/usr/bin/env bash
# Stages the build context of router/Dockerfile that the construct package (lib/) carries for
# VllmImage.withRouterSidecar(): exactly what the Dockerfile's installed-package branch needs, nothing else.
#   DEST/package.json           the router package's name, version and exact runtime dependencies (no lock: the
#                               image's build stage installs them, `npm install --omit=dev`)
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
