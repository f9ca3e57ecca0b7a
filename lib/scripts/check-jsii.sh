#!/usr/bin/env bash
# The construct library for every CDK language, as CI checks it (docs/construct.md#other-cdk-languages):
#   1. jsii compiles lib/ (lib/.jsii, lib/dist);
#   2. jsii-diff against the baseline assembly kept in lib/api-baseline (the last release's, until there is a registry
#      release): any breaking change fails (--error-on all, as the package is still marked experimental) unless its
#      key is in allowed-breaking-changes.txt after a `# reason` line;
#   3. jsii-pacmak generates the Python, Java, .NET and Go packages into dist/jsii with --code-only: their package
#      registries (PyPI, Maven Central, NuGet, the Go proxy) and toolchains are not reachable here, so sources are
#      generated but not built;
#   4. the generated Python passes `python3 -m py_compile`;
#   5. jsii-rosetta in strict mode: lib/README.md (in the assembly) and the construct snippets of README.md and
#      docs/*.md compile and translate, and the docs' Python blocks are current.
# Prints each step's wall time.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root/lib"
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=${JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION:-20}
step() {
  local name=$1 start=$SECONDS
  shift
  "$@"
  echo "check-jsii: $name: $((SECONDS - start)) s"
}
reasons_given() {
  awk '/^#/ { reason = 1; next } /^[[:space:]]*$/ { next } { if (!reason) { print "allowed-breaking-changes.txt: " $0 " has no # reason line above it"; bad = 1 } reason = 0 } END { exit bad }' api-baseline/allowed-breaking-changes.txt
}
step jsii npx jsii --silence-warnings=reserved-word
step reasons reasons_given
step jsii-diff npx jsii-diff --keys --error-on all --ignore-file api-baseline/allowed-breaking-changes.txt api-baseline .
rm -rf ../dist/jsii
step jsii-pacmak npx jsii-pacmak --code-only --targets python,java,dotnet,go
py_compile() { find ../dist/jsii/python -name '*.py' -print0 | xargs -0 python3 -m py_compile; }
step py_compile py_compile
for language in python java dotnet go; do
  echo "check-jsii: $language: $(find "../dist/jsii/$language" -type f | wc -l) files in dist/jsii/$language"
done
step rosetta-assembly npx jsii-rosetta extract --strict --compress-tablet .jsii
step rosetta-docs node scripts/rosetta-docs.js --check
