/**
 * The floor of the router's platform, for `npm run bench:router`: the least a Node.js proxy on the same stack
 * (node:http server, undici dispatch to the backends) can do per request — read the whole body, hash its first
 * 8 KiB to pick a backend, stream the answer back. No JSON parsing, no validation, no policy, no metrics, no
 * error handling worth the name: not a product, a yardstick. Router CPU per request minus this proxy's is what
 * the router's own features cost.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool, type Dispatcher } from 'undici';

export interface BareProxy {
  readonly url: string;
  close(): Promise<void>;
}

export async function startBareNodeProxy(backendUrls: readonly string[]): Promise<BareProxy> {
  const pools = backendUrls.map((u) => new Pool(u, { connections: 1024, keepAliveTimeout: 4000 }));
  const server: Server = createServer({ keepAliveTimeout: 5000, noDelay: true }, (req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      chunks.push(c);
      size += c.length;
    });
    req.on('end', () => {
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
      let h = 0x811c9dc5;
      const n = Math.min(body.length, 8192);
      for (let i = 0; i < n; i++) h = Math.imul(h ^ body[i], 0x01000193);
      const pool = pools[(h >>> 0) % pools.length];
      const headers: IncomingHttpHeaders = { 'content-type': 'application/json' };
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart() {},
        onResponseStart(_c, status, upstreamHeaders) {
          const out: Record<string, string | string[]> = {};
          for (const k in upstreamHeaders)
            if (k !== 'connection' && k !== 'keep-alive' && k !== 'transfer-encoding')
              out[k] = upstreamHeaders[k] as string | string[];
          res.writeHead(status, out);
        },
        onResponseData(c, chunk) {
          if (!res.write(chunk)) {
            c.pause();
            res.once('drain', () => c.resume());
          }
        },
        onResponseEnd() {
          res.end();
        },
        onResponseError() {
          if (!res.headersSent) res.writeHead(502).end();
          else res.destroy();
        },
      };
      pool.dispatch(
        { method: 'POST', path: req.url ?? '/', headers: headers as Record<string, string>, body },
        handler,
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.all(pools.map((p) => p.close()));
    },
  };
}
