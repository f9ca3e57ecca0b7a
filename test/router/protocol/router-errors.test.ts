import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openAiErrorBody, ROUTER_ERRORS, RouterError, type RouterErrorCode } from '../../../router/src/protocol';

const docs = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'errors.md'), 'utf8');

describe('when the error registry is documented', () => {
  it.each(Object.keys(ROUTER_ERRORS) as RouterErrorCode[])(
    'GIVEN code %s THEN docs/errors.md has its row with status, type and AWS exception',
    (code) => {
      const spec = ROUTER_ERRORS[code];
      expect(docs).toContain(
        `| \`${code}\` | ${spec.status} | \`${spec.type}\` | \`${spec.awsErrorType}\` | ${spec.when} |`,
      );
    },
  );

  it('GIVEN the docs table THEN it lists no code the registry lacks', () => {
    const documented = [...docs.matchAll(/^\| `([a-z_]+)` \| \d{3} \|/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual(Object.keys(ROUTER_ERRORS).sort());
  });

  it('GIVEN a RouterError THEN its status, type and body come from the registry', () => {
    const error = new RouterError('payload_too_large', 'too big');
    expect(error.status).toBe(413);
    expect(openAiErrorBody(error)).toEqual({
      error: { message: 'too big', type: 'invalid_request_error', code: 'payload_too_large' },
    });
  });
});
