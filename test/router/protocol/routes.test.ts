import { matchRoute, RouterError } from '../../../router/src/protocol';

describe('when a request path is matched', () => {
  it.each([
    ['POST', '/v1/chat/completions', 'chat', 'message-text', 'passthrough'],
    ['POST', '/v1/completions', 'completions', 'message-text', 'passthrough'],
    ['GET', '/v1/models', 'models', 'message-text', 'passthrough'],
    ['GET', '/ping', 'ping', 'message-text', 'passthrough'],
    ['GET', '/health', 'ping', 'message-text', 'passthrough'],
    ['GET', '/metrics', 'metrics', 'message-text', 'passthrough'],
    ['POST', '/invocations', 'invocations', 'body-bytes', 'passthrough'],
    ['POST', '/endpoints/my-endpoint/invocations', 'invocations', 'body-bytes', 'sagemaker-invoke'],
    [
      'POST',
      '/endpoints/my-endpoint/invocations-response-stream',
      'invocations',
      'body-bytes',
      'sagemaker-eventstream',
    ],
    ['POST', '/endpoints/my-endpoint/openai/v1/chat/completions', 'chat', 'message-text', 'passthrough'],
  ])('GIVEN %s %s THEN it is the %s route', (method, path, kind, keyBasis, framing) => {
    expect(matchRoute(method, path)).toMatchObject({ kind, keyBasis, framing });
  });

  it('GIVEN a runtime-API path THEN the endpoint name is captured and errors use the SageMaker dialect', () => {
    expect(matchRoute('POST', '/endpoints/ep-1/invocations')).toMatchObject({
      endpointName: 'ep-1',
      dialect: 'sagemaker-runtime',
    });
  });

  it.each([
    '/v2/chat/completions',
    '/',
    '/endpoints/ep/unknown',
    '/endpoints/-bad-/invocations',
    '/endpoints//invocations',
    `/endpoints/${'a'.repeat(64)}/invocations`,
  ])('GIVEN unknown path %s THEN not_found', (path) => {
    expect(() => matchRoute('POST', path)).toThrow(expect.objectContaining({ code: 'not_found', status: 404 }));
  });

  it('GIVEN a 63-character endpoint name THEN it matches', () => {
    expect(matchRoute('POST', `/endpoints/${'a'.repeat(63)}/invocations`).endpointName).toHaveLength(63);
  });

  it.each([
    ['GET', '/v1/chat/completions', ['POST']],
    ['PUT', '/invocations', ['POST']],
    ['POST', '/ping', ['GET', 'HEAD']],
    ['DELETE', '/endpoints/ep/invocations', ['POST']],
  ])('GIVEN %s %s THEN method_not_allowed with Allow %j', (method, path, allow) => {
    try {
      matchRoute(method, path);
      throw new Error('expected a RouterError');
    } catch (err) {
      expect(err).toBeInstanceOf(RouterError);
      expect(err).toMatchObject({ code: 'method_not_allowed', status: 405, details: { allow } });
    }
  });
});
