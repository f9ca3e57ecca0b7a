/**
 * The routing strategies a SageMaker endpoint runs itself (its `RoutingConfig.RoutingStrategy`), by the name of the
 * policy that models each here. Those strategies go straight into the construct's `routing`; every other policy
 * (cache-aware) needs the router sidecar or a fleet the router manages. Plans size them for the construct, and
 * reports lead with them. Pure data: no imports.
 */
export const SAGEMAKER_ROUTING_OF: Readonly<Record<string, 'RANDOM' | 'LEAST_OUTSTANDING_REQUESTS' | 'PREFIX_AWARE'>> =
  {
    random: 'RANDOM',
    'least-outstanding-requests': 'LEAST_OUTSTANDING_REQUESTS',
    'sagemaker-prefix-aware': 'PREFIX_AWARE',
  };
