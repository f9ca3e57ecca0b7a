/**
 * `npm run docs:policies`: rewrites the generated policy tables of docs/router.md from the policy registry.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withGeneratedSections } from '../src/policy/policy-docs';

const path = join(__dirname, '..', '..', '..', 'docs', 'router.md');
const before = readFileSync(path, 'utf8');
const after = withGeneratedSections(before);
if (after !== before) writeFileSync(path, after);
process.stdout.write(`${path}: ${after === before ? 'up to date' : 'updated'}\n`);
