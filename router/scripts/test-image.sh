#!/usr/bin/env bash
# `npm run test:image` (called by .ci/run): router/Dockerfile built and run by a real Docker engine, with no image
# registry. Steps:
#   1. Debian's Docker engine and debootstrap, installed with apt-get when missing (root only);
#   2. dockerd started when none answers, and stopped again on exit (only the one this script started);
#   3. stand-in base images, built once and cached by tag: a minimal Debian root filesystem (debootstrap,
#      `docker import`) for the DLC, and the same with this machine's Node and npm for the Node stage. The host's
#      certificate authorities (npm's cafile, NODE_EXTRA_CA_CERTS or SSL_CERT_FILE) and npm registry go into the
#      stand-in Node image only, so its npm trusts what the host's npm trusts; router/Dockerfile is never changed;
#   4. router/Dockerfile built from this checkout (BuildKit) and from the sidecar/ context the packed construct
#      (`npm pack -w lib`) carries, the asset context for an installed package (the legacy builder, so both builders are covered);
#   5. the containers run on the host network, bound to 127.0.0.1, and checked by router/bench/image-test.ts.
# Environment: DEBIAN_MIRROR (default: the first URI in apt's sources, else deb.debian.org), DEBIAN_SUITE (bookworm).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
say() { echo "test:image: $*"; }
fail() {
  echo "test:image: $*" >&2
  exit 1
}
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }

run_id="ti$$"
work=$(mktemp -d)
dockerd_pid=''
cleanup() {
  local ids
  ids=$(docker ps -aq --filter "label=prefix-router-image-test=$run_id" 2>/dev/null || true)
  if [ -n "$ids" ]; then docker rm -f $ids >/dev/null 2>&1 || true; fi
  if [ -n "$dockerd_pid" ]; then
    say "stopping the dockerd it started (pid $dockerd_pid)"
    kill -TERM "$dockerd_pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$dockerd_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
started=$(now)

# 1. The engine and debootstrap.
if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing Debian's docker.io and debootstrap"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io debootstrap >/dev/null
  else
    fail "needs a Docker engine (dockerd) and debootstrap, and cannot install them: installing takes root and apt-get (user $(id -un), apt-get $(command -v apt-get || echo missing)). Install Debian's docker.io and debootstrap and rerun."
  fi
fi

# A client that can build with BuildKit: Docker 23+ CLIs need the buildx plugin for it, Debian's 20.10 has it built in.
docker_cli=$(command -v docker) || fail "no docker client found"
client_major=$( ("$docker_cli" version --format '{{.Client.Version}}' 2>/dev/null || true) | head -1 | cut -d. -f1)
case "$client_major" in '' | *[!0-9]*) client_major=0 ;; esac
if [ "$client_major" -ge 23 ] && ! "$docker_cli" buildx version >/dev/null 2>&1; then
  if [ -x /usr/bin/docker ]; then docker_cli=/usr/bin/docker; else fail "$docker_cli needs the buildx plugin to build with BuildKit"; fi
fi
docker() { "$docker_cli" "$@"; }
export DOCKER="$docker_cli"

# 2. A running engine.
if ! docker info >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then
    fail "no Docker engine answers ($( (docker version --format '{{.Server.Version}}' 2>&1 || true) | grep -m1 -i -E 'cannot|error|denied' || echo 'no answer')) and only root can start dockerd here"
  fi
  say "starting dockerd"
  dockerd >"$work/dockerd.log" 2>&1 &
  dockerd_pid=$!
  for _ in $(seq 1 150); do
    docker info >/dev/null 2>&1 && break
    kill -0 "$dockerd_pid" 2>/dev/null || break
    sleep 0.2
  done
  if ! docker info >/dev/null 2>&1; then
    fail "dockerd did not start, so the image cannot be built or run here. Its last lines:
$(tail -15 "$work/dockerd.log")"
  fi
fi
say "Docker engine $(docker version --format '{{.Server.Version}}') ready after $(since "$started")"

# 3. Stand-in images, cached by tag (a rerun reuses them).
suite=${DEBIAN_SUITE:-bookworm}
mirror=${DEBIAN_MIRROR:-$(grep -h -o -m1 -E 'https?://[^ ]+/debian/?$' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null | head -1 || true)}
mirror=${mirror:-http://deb.debian.org/debian}
base_tag="prefix-router-test/dlc-stand-in:$suite"
if ! docker image inspect "$base_tag" >/dev/null 2>&1; then
  t=$(now)
  say "building $base_tag: debootstrap --variant=minbase $suite from $mirror"
  debootstrap --variant=minbase "$suite" "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 || fail "debootstrap failed: $(tail -5 "$work/debootstrap.log")"
  tar -C "$work/rootfs" -c . | docker import - "$base_tag" >/dev/null
  rm -rf "$work/rootfs"
  say "$base_tag built in $(since "$t")"
fi

# The Node stage stand-in: this machine's node and npm on the Debian root, plus its CAs and registry.
node_bin=$(readlink -f "$(command -v node)")
npm_dir=$(npm root -g)/npm
[ -f "$npm_dir/bin/npm-cli.js" ] || fail "npm's own files not found at $npm_dir"
ca_file=''
for candidate in "$(npm config get cafile 2>/dev/null || true)" "${NODE_EXTRA_CA_CERTS:-}" "${SSL_CERT_FILE:-}"; do
  if [ -n "$candidate" ] && [ "$candidate" != null ] && [ "$candidate" != undefined ] && [ -f "$candidate" ]; then
    ca_file=$candidate
    break
  fi
done
registry=$(npm config get registry)
key=$( (echo npm-cache-v1; node --version; npm --version; echo "$registry"; if [ -n "$ca_file" ]; then sha256sum "$ca_file"; fi; docker image inspect -f '{{.Id}}' "$base_tag") | sha256sum | cut -c1-12)
node_tag="prefix-router-test/node-stand-in:$(node --version)-$key"
if ! docker image inspect "$node_tag" >/dev/null 2>&1; then
  t=$(now)
  ctx="$work/node-context"
  mkdir -p "$ctx"
  cp "$node_bin" "$ctx/node"
  cp -r "$npm_dir" "$ctx/npm"
  if [ -n "$ca_file" ]; then cp "$ca_file" "$ctx/host-ca.pem"; else : >"$ctx/host-ca.pem"; fi
  # The host's npm cache (filled by the `npm ci` before this), so the build stage's npm takes tarballs from it rather
  # than downloading the lock again: faster, and proof against a registry download that stalls.
  mkdir -p "$ctx/npm-cache"
  host_cache=$(npm config get cache)/_cacache
  if [ -d "$host_cache" ]; then cp -r "$host_cache" "$ctx/npm-cache/_cacache"; fi
  cat >"$ctx/Dockerfile" <<EOF
ARG BASE
FROM \${BASE}
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY host-ca.pem /usr/local/share/prefix-router-test/host-ca.pem
COPY npm-cache /root/.npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx
ENV npm_config_registry=$registry \\
    npm_config_prefer_offline=true \\
    npm_config_fetch_timeout=60000 \\
    npm_config_update_notifier=false${ca_file:+ \\
    NODE_EXTRA_CA_CERTS=/usr/local/share/prefix-router-test/host-ca.pem \\
    npm_config_cafile=/usr/local/share/prefix-router-test/host-ca.pem}
EOF
  DOCKER_BUILDKIT=0 docker build -q --build-arg "BASE=$base_tag" -t "$node_tag" "$ctx" >/dev/null
  say "$node_tag built in $(since "$t") (node $node_bin, npm $npm_dir, CA ${ca_file:-none}, registry $registry)"
fi

# 4. The router image from both build contexts.
t=$(now)
(cd "$root" && npm run build --silent)
say "npm run build: $(since "$t")"
# One build, retried when it fails or runs past 15 minutes (a registry download that stalls; completed layers are
# kept in the build cache, so a retry resumes after them). $1 tag, $2 context, $3 DOCKER_BUILDKIT, $4 log.
build_router() {
  local attempt progress=()
  if [ "$3" = 1 ]; then progress=(--progress=plain); fi
  for attempt in 1 2 3; do
    if DOCKER_BUILDKIT=$3 timeout 900 "$docker_cli" build --network host "${progress[@]}" -f "$2/router/Dockerfile" \
      --build-arg "BASE_IMAGE=$base_tag" --build-arg "NODE_IMAGE=$node_tag" -t "$1" "$2" >"$4" 2>&1; then
      return 0
    fi
    say "build of $1 failed (attempt $attempt of 3): $(tail -3 "$4" | tr '\n' ' ')"
  done
  fail "docker build of $1 failed:
$(tail -30 "$4")"
}

t=$(now)
build_router prefix-router-test/router:checkout "$root" 1 "$work/build-checkout.log"
checkout_build=$(since "$t")
grep -o 'runs on this base (glibc [0-9.]*)' "$work/build-checkout.log" | head -1 | sed 's/^/test:image: the copied node /' || true
say "checkout context built (BuildKit) in $checkout_build"

t=$(now)
(cd "$root" && npm pack --silent -w lib --pack-destination "$work" >/dev/null)
mkdir "$work/package"
tar -C "$work/package" --strip-components=1 -xzf "$work"/cdk-prefix-aware-llm-0*.tgz
[ ! -e "$work/package/sidecar/package-lock.json" ] || fail "the packed construct's sidecar context unexpectedly ships package-lock.json"
build_router prefix-router-test/router:package "$work/package/sidecar" 0 "$work/build-package.log"
package_build=$(since "$t")
say "npm package context built (legacy builder) in $package_build"

# 5. The checks.
node "$root/dist/router/bench/image-test.js" \
  --checkout-image prefix-router-test/router:checkout --package-image prefix-router-test/router:package \
  --base-image "$base_tag" --label "prefix-router-image-test=$run_id"
say "passed in $(since "$started") (builds: checkout $checkout_build, package $package_build)"
