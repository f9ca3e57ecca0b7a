import { Client } from 'undici';
import type { Logger } from 'pino';
import type { HealthCheckOptions } from '../config';
import type { Backend, HealthState } from './backend';

/**
 * Periodic GET of each backend's health path. A backend starts 'pending' and is admitted by its first passed
 * check; a healthy backend is ejected after `failureThreshold` consecutive failures; an ejected one is
 * re-admitted after `recoveryThreshold` consecutive passes. A check passes on a 2xx within `timeoutMs`.
 *
 * Checks use their own single-connection client per backend, not the request pool: under load every pooled
 * connection may be busy streaming, and a check queued behind them would time out and eject a busy but healthy
 * backend.
 *
 * With `timeoutsKeepHealthy` (the container's sagemaker mode, where the engine is the only backend), a check that
 * times out gives no verdict on an admitted backend: a loaded engine answers /health late, and ejecting the only
 * one would fail every request. A refused connection or an error status still ejects it.
 */
export class HealthChecker {
  private readonly clients = new Map<Backend, Client>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(
    private readonly backends: readonly Backend[],
    private readonly options: HealthCheckOptions,
    private readonly log: Logger,
    private readonly timeoutsKeepHealthy = false,
    /** Called when a backend is admitted (its first passed check, or re-admitted after an ejection). */
    private readonly onAdmitted?: (backend: Backend) => void,
  ) {
    for (const b of backends) {
      this.clients.set(
        b,
        new Client(b.origin, { pipelining: 1, keepAliveTimeout: Math.max(options.intervalMs * 2, 4_000) }),
      );
    }
  }

  /** Runs one check of every backend (awaited) and then keeps checking every `intervalMs`. */
  async start(): Promise<void> {
    await Promise.all(this.backends.map((b) => this.checkAndRecord(b)));
    for (const b of this.backends) this.schedule(b);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await Promise.all([...this.clients.values()].map((c) => c.destroy().catch(() => undefined)));
  }

  private schedule(backend: Backend): void {
    if (this.stopped) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      void this.checkAndRecord(backend).then(() => this.schedule(backend));
    }, this.options.intervalMs);
    timer.unref();
    this.timers.add(timer);
  }

  private async checkAndRecord(backend: Backend): Promise<void> {
    const verdict = await this.probe(backend);
    if (this.stopped) return;
    if (verdict === 'timeout' && this.timeoutsKeepHealthy && backend.health === 'healthy') return;
    this.record(backend, verdict === 'pass');
  }

  /** One check; never throws. */
  async check(backend: Backend): Promise<boolean> {
    return (await this.probe(backend)) === 'pass';
  }

  private async probe(backend: Backend): Promise<'pass' | 'fail' | 'timeout'> {
    const client = this.clients.get(backend);
    if (client === undefined) return 'fail';
    try {
      const response = await client.request({
        method: 'GET',
        path: `${backend.basePath}${this.options.path}`,
        headersTimeout: this.options.timeoutMs,
        bodyTimeout: this.options.timeoutMs,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      await response.body.dump();
      return response.statusCode >= 200 && response.statusCode < 300 ? 'pass' : 'fail';
    } catch (err) {
      return isTimeout(err) ? 'timeout' : 'fail';
    }
  }

  private record(backend: Backend, passed: boolean): void {
    const from = backend.health;
    if (passed) {
      backend.consecutiveFailures = 0;
      backend.consecutiveSuccesses++;
      if (
        from === 'pending' ||
        (from === 'ejected' && backend.consecutiveSuccesses >= this.options.recoveryThreshold)
      ) {
        this.transition(backend, 'healthy');
      }
    } else {
      backend.consecutiveSuccesses = 0;
      backend.consecutiveFailures++;
      if (from === 'healthy' && backend.consecutiveFailures >= this.options.failureThreshold)
        this.transition(backend, 'ejected');
    }
  }

  private transition(backend: Backend, to: HealthState): void {
    const from = backend.health;
    backend.health = to;
    backend.consecutiveFailures = 0;
    backend.consecutiveSuccesses = 0;
    if (to === 'ejected')
      this.log.warn({ backend: backend.id, from, to }, 'backend ejected after failed health checks');
    else {
      this.log.info({ backend: backend.id, from, to }, 'backend admitted');
      this.onAdmitted?.(backend);
    }
  }
}

function isTimeout(err: unknown): boolean {
  const e = err as { code?: unknown; name?: unknown; cause?: { name?: unknown } } | undefined;
  return (
    e?.code === 'UND_ERR_HEADERS_TIMEOUT' ||
    e?.code === 'UND_ERR_BODY_TIMEOUT' ||
    e?.name === 'TimeoutError' ||
    e?.cause?.name === 'TimeoutError'
  );
}
