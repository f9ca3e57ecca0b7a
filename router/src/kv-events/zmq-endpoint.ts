/**
 * The ZeroMQ endpoints KV events travel on, checked before any socket opens. Events carry token ids, i.e. the
 * prompts (docs/security.md), so by default an endpoint must stay on this machine: `tcp://` on a loopback address
 * (127.0.0.0/8, ::1, localhost) or `ipc://`. `allowNonLoopback` is the explicit opt-out for a network the
 * operator trusts (a pod's own network, say).
 */

/** `tcp://HOST:PORT` (IPv6 in brackets) or `ipc://PATH`; vLLM's wildcard `*` (every interface) is not loopback. */
const TCP_ENDPOINT = /^tcp:\/\/(\[[0-9a-fA-F:.]+\]|[^:/[\]\s]+):(\d{1,5})$/;

export interface KvEndpointOptions {
  /** Accept a non-loopback tcp host (events then leave the machine, prompts with them). Default false. */
  readonly allowNonLoopback?: boolean;
}

/** Whether a tcp host is this machine's loopback. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  if (bare === 'localhost' || bare === '::1' || bare === '0:0:0:0:0:0:0:1') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

/**
 * Checks one endpoint; returns it unchanged, or throws a RangeError naming `what` (the flag or option), the
 * endpoint and the rule.
 */
export function checkKvEndpoint(what: string, endpoint: string, options: KvEndpointOptions = {}): string {
  if (endpoint.startsWith('ipc://') && endpoint.length > 'ipc://'.length) return endpoint;
  const match = TCP_ENDPOINT.exec(endpoint);
  if (match === null)
    throw new RangeError(`${what} must be tcp://HOST:PORT or ipc://PATH, got ${JSON.stringify(endpoint)}`);
  const port = Number(match[2]);
  if (port > 65535) throw new RangeError(`${what}: port ${port} is not between 0 and 65535`);
  if (!options.allowNonLoopback && !isLoopbackHost(match[1])) {
    throw new RangeError(
      `${what}: ${endpoint} is not a loopback address; KV events carry token ids (prompts), so they stay on ` +
        '127.0.0.1, ::1 or localhost unless non-loopback endpoints are allowed explicitly',
    );
  }
  return endpoint;
}

/** `tcp://HOST:PORT` for a host and port (IPv6 hosts bracketed). */
export function tcpEndpoint(host: string, port: number): string {
  return `tcp://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
}
