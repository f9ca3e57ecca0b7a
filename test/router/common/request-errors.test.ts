import { httpErrorCode, httpErrorMessage, transportErrorCode } from '../../../router/src/common/request-errors';

describe('when a failure is classified', () => {
  it.each([
    [
      503,
      '{"error":{"message":"all ejected","type":"server_error","code":"no_healthy_backend"}}',
      'http_503:no_healthy_backend',
    ],
    [400, '{"object":"error","message":"m","type":"BadRequestError","code":400}', 'http_400:BadRequestError'],
    [502, '<html>bad gateway</html>', 'http_502'],
    [429, '', 'http_429'],
  ])('GIVEN HTTP %i with body %s THEN the code is %s', (status, body, code) => {
    expect(httpErrorCode(status, body)).toBe(code);
  });

  it('GIVEN an error body THEN the detail is its message, or the start of a non-JSON body', () => {
    expect(httpErrorMessage('{"error":{"message":"too long","code":"x"}}')).toBe('too long');
    expect(httpErrorMessage('plain text')).toBe('plain text');
  });

  it.each([
    [{ code: 'ECONNREFUSED' }, false, 'connection_refused'],
    [
      Object.assign(new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })]), {}),
      false,
      'connection_refused',
    ],
    [{ code: 'ENOTFOUND' }, false, 'dns_error'],
    [{ code: 'UND_ERR_SOCKET' }, false, 'connection_reset'],
    [{ code: 'UND_ERR_SOCKET' }, true, 'stream_cut'],
    [{ code: 'ECONNRESET' }, true, 'stream_cut'],
    [{ code: 'UND_ERR_CONNECT_TIMEOUT' }, false, 'timeout'],
    [{ cause: { code: 'EPIPE' } }, false, 'connection_reset'],
    [new TypeError('weird'), false, 'client_error:TypeError'],
  ])('GIVEN %p (after headers: %p) THEN the code is %s', (err, afterHeaders, code) => {
    expect(transportErrorCode(err, afterHeaders)).toBe(code);
  });
});
