/**
 * The `zeromq` package, loaded on first use: it is a native addon (prebuilt linux-x64 binaries in the package), so
 * nothing that does not publish or subscribe to KV events loads it.
 */
export type ZeromqModule = typeof import('zeromq');

let loading: Promise<ZeromqModule> | undefined;

export function loadZeromq(): Promise<ZeromqModule> {
  loading ??= import('zeromq');
  return loading;
}
