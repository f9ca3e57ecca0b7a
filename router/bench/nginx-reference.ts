/**
 * Debian's nginx as the reference reverse proxy for `npm run bench:router`: same backends, same load, measured
 * in the same run, so "router throughput ÷ nginx throughput" is a ratio that holds on any machine. Optional:
 * when no nginx binary is installed the benchmark says so and reports without it (CI does not need it).
 *
 * One worker process (the router is one Node.js process), keep-alive to the backends, no access log, request
 * bodies kept in memory (client_body_buffer_size above the bench bodies) and response buffering off (as one
 * configures nginx in front of streaming LLM servers).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { acceptsConnections } from './port-probe';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface NginxReference {
  readonly url: string;
  readonly version: string;
  stop(): Promise<void>;
}

const CANDIDATES = ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/bin/nginx', '/usr/local/bin/nginx'];

export function findNginx(): string | undefined {
  const fromEnv = process.env.BENCH_NGINX;
  if (fromEnv !== undefined && fromEnv !== '') return existsSync(fromEnv) ? fromEnv : undefined;
  return CANDIDATES.find((p) => existsSync(p));
}

/** Starts nginx in front of `backendUrls` (round-robin upstream); undefined (with why) when it cannot. */
export async function startNginxReference(
  backendUrls: readonly string[],
): Promise<NginxReference | { readonly missing: string }> {
  const binary = findNginx();
  if (binary === undefined)
    return { missing: 'nginx is not installed (apt-get install -y nginx), so there is no reference proxy in this run' };
  const version = (spawnSync(binary, ['-v'], { encoding: 'utf8' }).stderr ?? '').trim().replace(/^nginx version: /, '');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'bench-nginx-'));
  const servers = backendUrls.map((u) => `    server ${new URL(u).host};`).join('\n');
  const conf = `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  client_max_body_size 16m;
  client_body_buffer_size 128k;
  keepalive_requests 1000000;
  upstream backends {
${servers}
    keepalive 256;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://backends;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
    }
  }
}
`;
  writeFileSync(join(dir, 'nginx.conf'), conf);
  const child: ChildProcess = spawn(binary, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGQUIT');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
  };
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    if (await acceptsConnections(port)) return { url, version, stop };
    await new Promise((r) => setTimeout(r, 50));
  }
  await stop();
  return { missing: `${binary} did not start (see its error log)` };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}
