/**
 * SageMaker's rule for the names of endpoints, endpoint configurations, models and production variants, as its
 * API reference states it (API_CreateEndpoint.html, API_CreateEndpointConfig.html, API_ProductionVariant.html:
 * "Pattern: ^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}"): 1 to 63 letters, digits and hyphens, starting and ending with
 * a letter or digit. The router's CLIs check names the user types against it before any call; the control-plane
 * fake of the tests enforces it. (lib/ keeps its own copy for `cdk synth`: it is a separate jsii package that
 * must not depend on the router.)
 */
export const SAGEMAKER_NAME = /^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$/;

/** The longest name SAGEMAKER_NAME allows. */
export const SAGEMAKER_NAME_MAX_LENGTH = 63;

/** The rule in words, for error messages. */
export const SAGEMAKER_NAME_RULE = '1-63 letters, digits or hyphens, starting and ending with a letter or digit';
