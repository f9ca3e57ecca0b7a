import { NEW_SESSION, parseNewSessionHeader, SessionAffinity } from '../../../router/src/server';

/**
 * SageMaker's stateful-session headers (https://docs.aws.amazon.com/sagemaker/latest/dg/stateful-sessions.html;
 * NewSessionId's documented form is `ID; Expires=YYYY-MM-DDThh:mm:ssZ`), learnt per backend.
 */
const T0 = Date.parse('2026-12-01T20:00:00Z');
const opened = (id: string, expires = '2026-12-01T20:20:00Z') => ({
  'x-amzn-sagemaker-new-session-id': `${id}; Expires=${expires}`,
});
const naming = (id: string) => ({ 'x-amzn-sagemaker-session-id': id });

describe('when a NewSessionId header is read', () => {
  it.each([
    ['abc-123; Expires=2026-12-01T20:20:00Z', { id: 'abc-123', expiresAtMs: Date.parse('2026-12-01T20:20:00Z') }],
    ['abc-123', { id: 'abc-123', expiresAtMs: undefined }],
    ['abc-123; Expires=soon', { id: 'abc-123', expiresAtMs: undefined }],
    ['; Expires=2026-12-01T20:20:00Z', undefined],
  ])('GIVEN %p THEN it is %p', (header, expected) => {
    expect(parseNewSessionHeader(header)).toEqual(expected);
  });
});

describe('when sessions are learnt from backend answers', () => {
  it('GIVEN a backend opened a session THEN requests naming it go there until it is closed', () => {
    const sessions = new SessionAffinity();
    sessions.observe('engine-b', opened('s1'), T0);
    expect(sessions.instanceFor(naming('s1'), T0 + 1)).toBe('engine-b');
    expect(sessions.instanceFor(naming(NEW_SESSION), T0 + 1)).toBeUndefined();
    expect(sessions.instanceFor(naming('unknown'), T0 + 1)).toBeUndefined();
    expect(sessions.instanceFor({}, T0 + 1)).toBeUndefined();
    sessions.observe('engine-b', { 'x-amzn-sagemaker-closed-session-id': 's1' }, T0 + 2);
    expect(sessions.instanceFor(naming('s1'), T0 + 3)).toBeUndefined();
    expect(sessions.size).toBe(0);
  });

  it('GIVEN a session one millisecond before and at its expiry THEN it is pinned, then forgotten', () => {
    const sessions = new SessionAffinity();
    sessions.observe('engine-a', opened('s1', '2026-12-01T20:00:10Z'), T0);
    expect(sessions.instanceFor(naming('s1'), T0 + 9_999)).toBe('engine-a');
    expect(sessions.instanceFor(naming('s1'), T0 + 10_000)).toBeUndefined();
    expect(sessions.size).toBe(0);
  });

  it('GIVEN one session more than the bound THEN the oldest is forgotten, the others kept', () => {
    const sessions = new SessionAffinity(3);
    for (const id of ['s1', 's2', 's3']) sessions.observe('engine-a', opened(id), T0);
    expect(sessions.size).toBe(3);
    sessions.observe('engine-b', opened('s4'), T0);
    expect(sessions.size).toBe(3);
    expect(sessions.instanceFor(naming('s1'), T0)).toBeUndefined();
    expect(['s2', 's3', 's4'].map((id) => sessions.instanceFor(naming(id), T0))).toEqual([
      'engine-a',
      'engine-a',
      'engine-b',
    ]);
  });

  it('GIVEN an answer that names an already expired session THEN nothing is pinned', () => {
    const sessions = new SessionAffinity();
    sessions.observe('engine-a', opened('s1', '2026-12-01T19:00:00Z'), T0);
    expect(sessions.size).toBe(0);
  });
});
