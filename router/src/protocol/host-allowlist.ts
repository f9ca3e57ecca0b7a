/**
 * The optional Host allowlist (`--allowed-hosts`): a defence against DNS rebinding, where a web page the victim
 * opens resolves its own name to the router's address and so reads the router's answers from the victim's browser.
 * The browser still sends the page's name in `Host`, so a router that answers only its own names is out of reach.
 * RFC 9110 §7.2 makes `Host` the authority the client meant; §15.5.20 gives 421 for a server unwilling to answer
 * for it.
 */

/** An allowlist entry: an exact host name or IP literal, or `.example.com` for that name and every name below it. */
export type AllowedHost = string;

/** Why an entry cannot be matched against a Host header, or undefined when it is valid. */
export function allowedHostProblem(entry: string): string | undefined {
  if (entry.length === 0) return 'an entry is empty';
  if (entry.includes('/') || entry.includes('@') || entry.includes('*'))
    return `"${entry}" is not a host name or IP address (no scheme, path, userinfo or wildcard; ".example.com" matches every name below it)`;
  if (/:\d+$/.test(entry) && !entry.startsWith('['))
    return `"${entry}" carries a port: list host names only (any port matches)`;
  if (entry.startsWith('[') && !/^\[[0-9a-fA-F:.]+\]$/.test(entry)) return `"${entry}" is not a bracketed IPv6 address`;
  return undefined;
}

/** The host part of a Host header, lower-cased and without its port; IPv6 literals keep their brackets. */
export function hostOf(hostHeader: string): string {
  const value = hostHeader.trim().toLowerCase();
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    return end === -1 ? value : value.slice(0, end + 1);
  }
  const colon = value.lastIndexOf(':');
  const host = colon === -1 ? value : value.slice(0, colon);
  // A fully qualified name's trailing dot names the same host.
  return host.endsWith('.') ? host.slice(0, -1) : host;
}

/** Whether a request whose Host header is `hostHeader` may be answered; no header never matches. */
export function hostAllowed(hostHeader: string | undefined, allowed: readonly AllowedHost[]): boolean {
  if (hostHeader === undefined || hostHeader.trim() === '') return false;
  const host = hostOf(hostHeader);
  return allowed.some((entry) => {
    const e = entry.toLowerCase();
    return e.startsWith('.') ? host === e.slice(1) || host.endsWith(e) : host === e;
  });
}
