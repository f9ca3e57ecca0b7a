#!/usr/bin/env bash
# `npm run check:image-contexts`: runs the build stage of router/Dockerfile (router/image-build.sh) without Docker
# on both build contexts the image supports, then starts the result's `prefix-router container` with two emulated
# engines and checks /ping and one chat completion:
#   1. a repository checkout: the tracked files minus .dockerignore (what the construct stages);
#   2. the staged context the construct package carries: `npm pack -w lib` (its prepack compiles with jsii and stages
#      sidecar/), extracted, sidecar/ used as the context.
# Needs the npm registry (dependencies are installed as in the image). Takes a few minutes.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  sleep 1
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# Starts the built container supervisor in $1 with emulated engines; waits for /ping 200 and answers one chat.
smoke() {
  local dir=$1 log=$1.log url=''
  (cd "$dir" && PREFIX_ROUTER_MODE=multi-engine PREFIX_ROUTER_ENGINES=2 PREFIX_ROUTER_GPUS=0 PREFIX_ROUTER_HOST=127.0.0.1 \
    PREFIX_ROUTER_PORT=0 PREFIX_ROUTER_ENGINE_BASE_PORT=0 PREFIX_ROUTER_HEALTH_INTERVAL_MS=200 PREFIX_ROUTER_EMF=off \
    PREFIX_ROUTER_ENGINE_COMMAND="node $dir/dist/bin/prefix-router.js emulate --instances 1 --port {port} --profile tiny" \
    exec node dist/bin/prefix-router.js container serve) >"$log" 2>&1 &
  local pid=$!
  pids+=("$pid")
  for _ in $(seq 1 300); do
    url=$(grep -o '"url":"http://127.0.0.1:[0-9]*"' "$log" | head -1 | cut -d'"' -f4 || true)
    if [ -n "$url" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/ping")" = 200 ]; then break; fi
    sleep 0.2
  done
  curl -sf "$url/v1/chat/completions" -H 'content-type: application/json' \
    -d '{"model":"tiny-emulated-model","messages":[{"role":"user","content":"hi"}],"max_tokens":2}' | grep -q '"choices"'
  kill -TERM "$pid"
  wait "$pid"
  echo "  $dir: /ping 200, chat answered, exit $?"
}

echo "checkout context"
mkdir "$work/checkout"
(cd "$root" && git ls-files -z | tar --exclude-from=.dockerignore --null -T - -cf -) | tar -C "$work/checkout" -xf -
(cd "$work/checkout" && sh router/image-build.sh >/dev/null)
test ! -e "$work/checkout/node_modules/typescript"
smoke "$work/checkout"

echo "npm package context (the construct tarball's sidecar/)"
(cd "$root" && npm pack --silent -w lib --pack-destination "$work" >/dev/null)
mkdir "$work/package"
tar -C "$work/package" --strip-components=1 -xzf "$work"/cdk-prefix-aware-llm-0*.tgz
test ! -e "$work/package/sidecar/package-lock.json"
(cd "$work/package/sidecar" && sh router/image-build.sh >/dev/null)
test ! -e "$work/package/sidecar/node_modules/aws-cdk-lib"
smoke "$work/package/sidecar"
echo "both build contexts work"
