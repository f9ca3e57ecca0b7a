import type { RoutingBlockKey } from '../../../router/src/state/state-hash-key';

/** A distinct 8-character block key for each 32-bit integer (tests build chains of them by number). */
export function testBlockKey(n: number): RoutingBlockKey {
  return (n >>> 0).toString(16).padStart(8, '0');
}
