/**
 * The server a benchmark drives: any OpenAI-compatible base URL (a router, a vLLM instance, a SageMaker
 * runtime-API shaped path). Requests go to `origin + basePath + /v1/...`.
 */
export interface TargetUrl {
  /** scheme://host:port */
  readonly origin: string;
  /** '' or '/some/prefix' (no trailing slash, no trailing /v1). */
  readonly basePath: string;
  /** origin + basePath: what reports show. */
  readonly display: string;
}

/**
 * Parses a base URL. It must be http(s) without query or fragment. A trailing `/v1` (the OpenAI clients'
 * convention) is dropped because the workload paths start with /v1; credentials in the URL are refused so
 * they never reach a report.
 */
export function parseTargetUrl(raw: string, name = 'url'): TargetUrl {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RangeError(`${name} must be an http:// or https:// URL (got '${raw}')`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RangeError(`${name} must be an http:// or https:// URL (got '${raw}')`);
  }
  if (url.username !== '' || url.password !== '')
    throw new RangeError(`${name} must not carry credentials; pass them as a header`);
  if (url.search !== '' || url.hash !== '')
    throw new RangeError(`${name} must not have a query or fragment (got '${raw}')`);
  let basePath = url.pathname.replace(/\/+$/, '');
  if (basePath.endsWith('/v1')) basePath = basePath.slice(0, -3);
  return { origin: url.origin, basePath, display: `${url.origin}${basePath}` };
}
