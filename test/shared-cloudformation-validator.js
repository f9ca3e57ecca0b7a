/**
 * What `require('@aws/cloudformation-validate')` gives aws-cdk-lib in a suite (jest.config.js `moduleNameMapper`):
 * the validator the suite's worker process shares, one engine per configuration (test/shared-validator-environment.js says
 * why).
 */
module.exports = globalThis[Symbol.for('cdk-prefix-aware-llm/test/shared-cloudformation-validator')]();
