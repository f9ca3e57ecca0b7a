import { checkContainerEnvironment, loadContainerConfig } from '../../../router/src/container/container-config';

/** Flow control reaches the container's router through PREFIX_ROUTER_* (the construct's routerEnvironment), checked at synth. */
describe('when the container environment sets flow control', () => {
  it('GIVEN no flow-control variable THEN the container router holds lower classes at the default bound', () => {
    const config = loadContainerConfig({}).routerConfigFor(['http://127.0.0.1:1']);
    expect(config.flowControl).toMatchObject({ mode: 'on', queuedPrefillBoundTokens: 16_384, maxWaiting: 100_000 });
  });

  it('GIVEN off, a bound and a queue size THEN the container router gets them', () => {
    const config = loadContainerConfig({
      PREFIX_ROUTER_FLOW_CONTROL: 'off',
      PREFIX_ROUTER_FLOW_CONTROL_BOUND: '4096',
      PREFIX_ROUTER_FLOW_CONTROL_MAX_WAITING: '10',
    }).routerConfigFor(['http://127.0.0.1:1']);
    expect(config.flowControl).toMatchObject({ mode: 'off', queuedPrefillBoundTokens: 4096, maxWaiting: 10 });
  });

  it.each([
    ['PREFIX_ROUTER_FLOW_CONTROL', 'maybe', /^PREFIX_ROUTER_FLOW_CONTROL .*'on' or 'off'/],
    [
      'PREFIX_ROUTER_FLOW_CONTROL_BOUND',
      '-1',
      /^PREFIX_ROUTER_FLOW_CONTROL_BOUND must be an integer between 0 and 100000000/,
    ],
    ['PREFIX_ROUTER_FLOW_CONTROL_MAX_WAITING', '1e9', /^PREFIX_ROUTER_FLOW_CONTROL_MAX_WAITING /],
  ])('GIVEN %s=%s THEN the synth check names the variable and its range', (name, value, message) => {
    expect(checkContainerEnvironment({ [name]: value }).problems).toEqual([expect.stringMatching(message)]);
  });
});
