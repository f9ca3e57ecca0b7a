import { createServer, type Server } from 'node:net';

/**
 * `count` distinct free ports on 127.0.0.1, found by listening on port 0 and closing again
 * (PREFIX_ROUTER_ENGINE_BASE_PORT=0: tests and ad-hoc runs where fixed ports could be taken). Another process
 * may take a port between this check and the engine's start; the engine then exits and is restarted on it.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
    }
    return servers.map((s) => {
      const address = s.address();
      if (address === null || typeof address === 'string') throw new Error('no port assigned');
      return address.port;
    });
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}
