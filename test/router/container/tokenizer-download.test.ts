import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitForDownloadedTokenizer, type HubTokenizer, type TokenizerWait } from '../../../router/src/container';

/**
 * The wait for a tokenizer the engine downloads into the Hugging Face hub cache: the snapshot's file through
 * refs/REVISION, as huggingface_hub writes them (the ref first, the snapshot link once the blob is whole).
 */
describe('when the container waits for the engine to download the tokenizer', () => {
  let cache: string;
  let hub: HubTokenizer;
  const repo = (): string => join(cache, 'models--org--model');
  const never = new Promise<string>(() => undefined);
  const waitFor = (extra: Partial<TokenizerWait> = {}): TokenizerWait => ({
    hub,
    timeoutMs: 10_000,
    pollMs: 10,
    giveUp: never,
    ...extra,
  });

  /** What huggingface_hub leaves once the download is done: refs/main, then the snapshot's tokenizer.json. */
  function download(commit = 'c0ffee'): string {
    mkdirSync(join(repo(), 'refs'), { recursive: true });
    writeFileSync(join(repo(), 'refs', 'main'), commit);
    mkdirSync(join(repo(), 'snapshots', commit), { recursive: true });
    writeFileSync(join(repo(), 'snapshots', commit, 'tokenizer.json'), '{}');
    return join(repo(), 'snapshots', commit, 'tokenizer.json');
  }

  beforeEach(() => {
    cache = mkdtempSync(join(tmpdir(), 'hub-wait-'));
    hub = { repoId: 'org/model', revision: 'main', cacheDir: cache };
  });
  afterEach(() => rmSync(cache, { recursive: true, force: true }));

  it('GIVEN the download finishes while it waits THEN it resolves with the snapshot file', async () => {
    let path = '';
    setTimeout(() => (path = download()), 100);
    const outcome = await waitForDownloadedTokenizer(waitFor());
    expect(outcome).toMatchObject({ kind: 'found', path });
    expect(outcome.kind === 'found' && outcome.afterMs).toBeGreaterThanOrEqual(90);
  });

  it('GIVEN only refs/main is written (the download under way) THEN it keeps waiting, and times out naming the commit path', async () => {
    mkdirSync(join(repo(), 'refs'), { recursive: true });
    writeFileSync(join(repo(), 'refs', 'main'), 'c0ffee');
    const outcome = await waitForDownloadedTokenizer(waitFor({ timeoutMs: 60 }));
    expect(outcome).toEqual({
      kind: 'timeout',
      problem: `PREFIX_ROUTER_ENGINE_KV_EVENTS=on needs the model's tokenizer.json, and the engine had not downloaded it after PREFIX_ROUTER_TOKENIZER_WAIT_MS=60 ms: none at ${join(repo(), 'snapshots', 'c0ffee', 'tokenizer.json')} (model org/model, revision main) (a model without a tokenizer.json never gets one); set PREFIX_ROUTER_TOKENIZER to its tokenizer.json, or raise PREFIX_ROUTER_TOKENIZER_WAIT_MS (0-86400000)`,
    });
  });

  it('GIVEN a revision given as a commit THEN its snapshot is found without refs/', async () => {
    const commit = 'a'.repeat(40);
    mkdirSync(join(repo(), 'snapshots', commit), { recursive: true });
    writeFileSync(join(repo(), 'snapshots', commit, 'tokenizer.json'), '{}');
    hub = { ...hub, revision: commit };
    expect(await waitForDownloadedTokenizer(waitFor())).toMatchObject({
      kind: 'found',
      path: join(repo(), 'snapshots', commit, 'tokenizer.json'),
    });
  });

  it('GIVEN an engine gives up (fail fast) while it waits THEN it ends at once with the reason', async () => {
    const started = Date.now();
    const outcome = await waitForDownloadedTokenizer(
      waitFor({ giveUp: new Promise((resolve) => setTimeout(() => resolve('engine-0 exited 3 times'), 50)) }),
    );
    expect(outcome).toEqual({ kind: 'gave-up', reason: 'engine-0 exited 3 times' });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('GIVEN the container is told to stop while it waits THEN it ends at once, stopped', async () => {
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 50);
    const started = Date.now();
    expect(await waitForDownloadedTokenizer(waitFor({ pollMs: 60_000, stop: stop.signal }))).toEqual({
      kind: 'stopped',
    });
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
