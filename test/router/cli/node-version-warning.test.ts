import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compiledCli } from '../../compiled-dist';

/**
 * The AWS SDK for JavaScript v3 warns once per process, when a client is constructed on Node < 22, that its
 * releases after the first week of January 2027 will require Node 22 (@aws-sdk/core emitWarningIfUnsupportedVersion).
 * Only the commands that call AWS construct a client (ab, bench --sagemaker-endpoint, trace import s3://), so the
 * local ones never print it; router/README.md says which Node versions are supported and tested.
 */
const ROOT = join(__dirname, '..', '..', '..');
const CLI = compiledCli();
const WARNING = /NodeVersionSupportWarning|will require node >=/;
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

function run(args: string[]): { status: number | null; stderr: string } {
  // The environment as a user has it: no switch that disables the SDK's warning.
  const env = { ...process.env };
  delete env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
  const result = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', timeout: 120_000, env });
  return { status: result.status, stderr: result.stderr };
}

describe("when local commands run on this Node (the AWS SDK's Node-version warning)", () => {
  (NODE_MAJOR < 22 ? test : test.skip)(
    'GIVEN an AWS SDK client constructed in this Node THEN the SDK prints the warning (the check below can see it)',
    () => {
      const { stderr } = run(['-e', "new (require('@aws-sdk/client-s3').S3Client)({ region: 'us-east-1' })"]);
      expect(stderr).toMatch(WARNING);
    },
  );

  test.each(['simulate --help', 'demo --help', 'emulate --help', 'plan --help', 'trace import --help'])(
    'GIVEN prefix-router %s THEN stderr has no Node-version warning',
    (args) => {
      const { status, stderr } = run([CLI, ...args.split(' ')]);
      expect(status).toBe(0);
      expect(stderr).not.toMatch(WARNING);
    },
  );

  test('GIVEN a short simulate run THEN stderr has no Node-version warning', () => {
    const out = mkdtempSync(join(tmpdir(), 'node-warning-'));
    const { status, stderr } = run([
      CLI,
      'simulate',
      '--workload',
      'trace:mooncake-synthetic?count=20',
      '--instances',
      '2',
      '--policy',
      'random',
      '--out',
      out,
      '--quiet',
    ]);
    expect(status).toBe(0);
    expect(stderr).not.toMatch(WARNING);
  });
});
