import { SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import { startEmulatorFleet, type RunningEmulatorFleet } from '../../../../router/src/emulator';
import { startEmulator, type RunningEmulator } from '../../../../router/src/emulator/emulator-server';
import { startRouter, type RunningRouter } from '../../../../router/src/server';

/**
 * A local stand-in for a SageMaker endpoint's data plane: emulated vLLM instances (tiny profile, fast) behind
 * the real router, which serves the SageMaker runtime API paths. The AWS SDK reaches it through the standard
 * AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME override with dummy static credentials; nothing leaves 127.0.0.1.
 */
export const TIME_SCALE = 20;

export interface LocalEndpoint {
  readonly fleet: RunningEmulatorFleet;
  readonly router: RunningRouter;
  readonly url: string;
  close(): Promise<void>;
}

/** `profile`: tiny (1,024-token context, fast) or p5-llama-3.1-70b (for the docs' 8,000-token prompts). */
export async function startLocalEndpoint(instances = 2, prefixLength = 1024, profile = 'tiny'): Promise<LocalEndpoint> {
  const fleet = await startEmulatorFleet(instances, { profile, timeScale: TIME_SCALE });
  const router = await startRouter({
    backends: fleet.urls,
    port: 0,
    logLevel: 'silent',
    healthCheck: { intervalMs: 0 },
    policy: { name: 'sagemaker-prefix-aware', prefixLength },
    routingHeaders: 'all',
  });
  return {
    fleet,
    router,
    url: router.url,
    async close() {
      await router.close();
      await fleet.close();
    },
  };
}

/** A local endpoint of inference components: engines serving model `base` and each its own LoRA adapters. */
export interface LocalAdapterEndpoint {
  readonly engines: readonly RunningEmulator[];
  readonly router: RunningRouter;
  /** The real runtime SDK client, pointed at the router (dummy credentials, no retries). */
  readonly runtime: SageMakerRuntimeClient;
  close(): Promise<void>;
}

/** One engine per entry of `adaptersPerEngine` (the adapter names it serves beside `base`), behind the real router. */
export async function startLocalAdapterEndpoint(
  adaptersPerEngine: readonly (readonly string[])[],
): Promise<LocalAdapterEndpoint> {
  const engines = await Promise.all(
    adaptersPerEngine.map((adapters) =>
      startEmulator({
        profile: 'tiny',
        timeScale: TIME_SCALE,
        modelName: 'base',
        ...(adapters.length > 0 ? { loraModules: adapters.map((name) => ({ name, path: `/adapters/${name}` })) } : {}),
      }),
    ),
  );
  const router = await startRouter({
    backends: engines.map((e) => e.url),
    port: 0,
    logLevel: 'silent',
    healthCheck: { intervalMs: 0 },
    policy: { name: 'sagemaker-prefix-aware', prefixLength: 1024 },
    routingHeaders: 'all',
  });
  const runtime = new SageMakerRuntimeClient({
    endpoint: router.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-a-secret' },
    maxAttempts: 1,
  });
  return {
    engines,
    router,
    runtime,
    async close() {
      runtime.destroy();
      await router.close();
      await Promise.all(engines.map((e) => e.close()));
    },
  };
}

/** Sets the SDK's environment for the local endpoint (override URL, region, dummy credentials); returns the undo. */
export function useLocalRuntimeEnv(url: string): () => void {
  const keys = [
    'AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME',
    'AWS_REGION',
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_ENDPOINT_URL_SAGEMAKER',
    'AWS_ENDPOINT_URL',
    'AWS_PROFILE',
  ];
  const saved = new Map(keys.map((k) => [k, process.env[k]]));
  process.env.AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME = url;
  process.env.AWS_REGION = 'us-east-1';
  process.env.AWS_ACCESS_KEY_ID = 'AKIDEXAMPLE';
  process.env.AWS_SECRET_ACCESS_KEY = 'not-a-secret';
  delete process.env.AWS_ENDPOINT_URL_SAGEMAKER;
  delete process.env.AWS_ENDPOINT_URL;
  delete process.env.AWS_PROFILE;
  return () => {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}
