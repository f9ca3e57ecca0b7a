import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Every file under `dir`, relative to it, sorted (what a packed or installed package holds). */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const entry of readdirSync(d)) {
      const path = join(d, entry);
      if (statSync(path).isDirectory()) walk(path);
      else out.push(relative(dir, path));
    }
  };
  walk(dir);
  return out.sort();
}
