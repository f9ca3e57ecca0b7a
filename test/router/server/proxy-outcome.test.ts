import { RouterError } from '../../../router/src/protocol';
import { classifyOutcome, type OutcomeClass, type ProxyOutcome } from '../../../router/src/server/proxy';

describe('classifyOutcome', () => {
  const rows: Array<[string, ProxyOutcome, OutcomeClass]> = [
    [
      'an answer the backend sent whole',
      { kind: 'answered', status: 200 },
      { statusLabel: '200', release: 'completed', backendCounter: 'completed' },
    ],
    [
      "a backend's own 4xx answer",
      { kind: 'answered', status: 400 },
      { statusLabel: '400', release: 'completed', backendCounter: 'completed' },
    ],
    [
      'a client that left',
      { kind: 'client-gone' },
      { statusLabel: '499', release: 'aborted', backendCounter: undefined },
    ],
    [
      'a stream the backend cut',
      { kind: 'stream-failed' },
      { statusLabel: 'stream_error', release: 'failed', backendCounter: 'failed' },
    ],
    [
      'a refused connection (retried)',
      { kind: 'refused' },
      { statusLabel: '502', release: 'failed', backendCounter: 'failed' },
    ],
    [
      'a model error (the engine rejected the request)',
      { kind: 'error', error: new RouterError('model_error', 'm', { originalStatusCode: 400 }) },
      { statusLabel: '424', release: 'completed', backendCounter: 'completed' },
    ],
    [
      'an upstream timeout',
      { kind: 'error', error: new RouterError('upstream_timeout', 't') },
      { statusLabel: '504', release: 'failed', backendCounter: 'failed' },
    ],
  ];
  it.each(rows)('GIVEN %s THEN it counts as expected', (_what, outcome, expected) => {
    expect(classifyOutcome(outcome)).toEqual(expected);
  });
});
