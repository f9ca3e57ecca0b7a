#!/usr/bin/env node
// The package's `prefix-router` bin. A committed file, so that npm links it at install time in a checkout too
// (npm skips bins whose target does not exist yet): the installed package runs its own build (dist/), a checkout
// the repository's `npm run build` output (../../dist) when the package build (`npm run build -w
// cdk-prefix-aware-llm-router`) has not run.
'use strict';
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const candidates = [
  join(__dirname, '..', 'dist', 'bin', 'prefix-router.js'),
  join(__dirname, '..', '..', 'dist', 'bin', 'prefix-router.js'),
];
const cli = candidates.find((path) => existsSync(path));
if (cli === undefined) {
  process.stderr.write(
    `prefix-router: not built (none of ${candidates.join(', ')}); run npm run build in the repository\n`,
  );
  process.exit(1);
}
require(cli);
