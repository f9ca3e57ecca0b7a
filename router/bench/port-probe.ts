import { connect } from 'node:net';

/** Whether something accepts TCP connections on 127.0.0.1:port now (benchmarks wait on their servers with it). */
export function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
