import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { KeyRing, MAX_KEY_FILE_BYTES, readKeyFile, type KeyFileError } from '../../../router/src/common/api-keys';
import { startFakeBackend, type FakeBackend } from '../../../router/bench/fake-openai-backend';
import { createRouterLogger, startRouter, type RunningRouter } from '../../../router/src/server';
import { chatBody, post } from '../server/helpers/router-fixture';

/**
 * Issue 41, finding 6: key files were re-read synchronously and whole, whatever they were: a symlink swapped to
 * /dev/zero filled gigabytes and stopped /ping, a FIFO hung the router past SIGTERM, a 400 MB file stalled it for
 * seconds. Key files are now read only if they are regular files of at most 1 MiB, asynchronously on re-reads; a file
 * that fails keeps the keys in use and says why.
 */
const KEY = 'sk-tenant-alpha-0123456789';

describe('when a key file is replaced by something that is not a small regular file', () => {
  let dir: string;
  let link: string;
  let errors: KeyFileError[];
  let ring: KeyRing;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'key-files-'));
    writeFileSync(join(dir, 'keys.v1'), `${KEY}\n`);
    link = join(dir, 'keys');
    symlinkSync(join(dir, 'keys.v1'), link);
    errors = [];
    ring = new KeyRing(link, (e) => errors.push(e));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const swapTo = (target: string): void => {
    unlinkSync(link);
    symlinkSync(target, link);
  };

  it.each([
    ['a character device (/dev/zero)', () => '/dev/zero', /is not a regular file/],
    [
      'a FIFO no one writes',
      (d: string) => (execFileSync('mkfifo', [join(d, 'fifo')]), join(d, 'fifo')),
      /is not a regular file/,
    ],
    [
      `a file of MAX_KEY_FILE_BYTES + 1 bytes`,
      (d: string) => (writeFileSync(join(d, 'big'), `${KEY}\n`.padEnd(MAX_KEY_FILE_BYTES + 1, '#')), join(d, 'big')),
      /is larger than 1048576 bytes/,
    ],
  ])('GIVEN %s THEN the re-read fails at once, keeps the key in use and says why', async (_what, target, why) => {
    swapTo(target(dir));
    const started = Date.now();
    await expect(ring.reload()).resolves.toBe(false);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(ring.match(KEY)).toBe(0);
    expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(why)]);
  });

  it('GIVEN a file of exactly MAX_KEY_FILE_BYTES THEN it is read', async () => {
    writeFileSync(join(dir, 'max'), `sk-new-key-0123456789\n`.padEnd(MAX_KEY_FILE_BYTES, '#'));
    swapTo(join(dir, 'max'));
    await expect(ring.reload()).resolves.toBe(true);
    expect(ring.match('sk-new-key-0123456789')).toBe(0);
  });

  it('GIVEN /dev/zero at start THEN the file is refused, naming it', () => {
    expect(() => readKeyFile('/dev/zero')).toThrow(/\/dev\/zero is not a regular file/);
  });
});

describe('when a running router polls a key file swapped to /dev/zero', () => {
  let dir: string;
  let backend: FakeBackend;
  let router: RunningRouter;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'key-files-router-'));
    writeFileSync(join(dir, 'keys.v1'), `${KEY}\n`);
    symlinkSync(join(dir, 'keys.v1'), join(dir, 'keys'));
    backend = await startFakeBackend({ name: 'b' });
    router = await startRouter(
      { backends: [backend.url], port: 0, healthCheck: { intervalMs: 0 }, apiKeyFile: join(dir, 'keys') },
      { logger: createRouterLogger('silent') },
    );
  });
  afterAll(async () => {
    await router.close();
    await backend.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('GIVEN the swap and a reload THEN /ping answers and the key in use is still accepted', async () => {
    unlinkSync(join(dir, 'keys'));
    symlinkSync('/dev/zero', join(dir, 'keys'));
    await router.reloadKeys();
    // Past one poll of the file as well.
    await new Promise((r) => setTimeout(r, 1_200));
    expect((await request(`${router.url}/ping`)).statusCode).toBe(200);
    const answer = await post(`${router.url}/v1/chat/completions`, chatBody('still in'), {
      'content-type': 'application/json',
      authorization: `Bearer ${KEY}`,
    });
    expect(answer.status).toBe(200);
  });
});
