/**
 * Jest's node environment, plus one CloudFormation template validator per worker process instead of one per suite.
 *
 * aws-cdk-lib validates every template it synthesizes with @aws/cloudformation-validate, a WebAssembly engine (the
 * suites turn its findings into errors: test/lib/helpers.ts). Building the engine loads every resource schema, about
 * 3.4 s of CPU, and Jest's module registry, new for each suite, made each of the two dozen suites that synthesize
 * build it again. This file is loaded by Node's own require, once per worker, so what it keeps outlives a suite: it
 * loads the validator once and hands each suite (through test/shared-cloudformation-validator.js, jest.config.js's
 * `moduleNameMapper`) the validator's exports with a CompositeEngine that builds one engine per configuration.
 * aws-cdk-lib asks for an engine with the same configuration in every suite (the rules it adds for the template's
 * resource types), so a suite validates with the engine an earlier suite built from that same configuration, as
 * aws-cdk-lib itself keeps one engine for every later template in a process. aws-cdk-lib frees an engine it
 * replaces; a shared engine serves the worker's later suites, so the suite's `free` leaves it alone.
 */
const { TestEnvironment } = require('jest-environment-node');

const SHARED_VALIDATOR = Symbol.for('cdk-prefix-aware-llm/test/shared-cloudformation-validator');

/** The validator aws-cdk-lib loads (its own dependency), resolved from aws-cdk-lib. */
const VALIDATOR = require.resolve('@aws/cloudformation-validate', {
  paths: [require('node:path').dirname(require.resolve('aws-cdk-lib/package.json'))],
});

let shared;

/**
 * A suite's value rebuilt from this file's realm: the validator accepts only plain objects, arrays and maps of its own
 * realm (a suite's `{}` has the suite's Object.prototype). Instances of other classes, such as the validator's own
 * TemplateContent, are kept as they are.
 */
function toThisRealm(value) {
  if (value === null || typeof value !== 'object') return value;
  const kind = Object.prototype.toString.call(value);
  if (kind === '[object Array]') return Array.from(value, toThisRealm);
  if (kind === '[object Map]') return new Map(Array.from(value, ([k, v]) => [toThisRealm(k), toThisRealm(v)]));
  const prototype = Object.getPrototypeOf(value);
  const plain = prototype === null || Object.getPrototypeOf(prototype) === null;
  if (!plain) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toThisRealm(v)]));
}

/** The validator's exports with a CompositeEngine that hands out one engine per configuration, made on first use. */
function sharedValidator() {
  if (shared !== undefined) return shared;
  const validator = require(VALIDATOR);
  const engines = new Map();
  class CompositeEngine {
    constructor(config) {
      // The configuration is data (rule texts and files, schema options): its JSON names the engine it builds.
      const key = JSON.stringify(config ?? {});
      let engine = engines.get(key);
      if (engine === undefined) {
        engine = new validator.CompositeEngine(toThisRealm(config));
        engines.set(key, engine);
      }
      // The engine's own methods, its options taken into this realm, and a `free` that leaves it to later suites.
      return Object.create(engine, {
        validateTemplate: { value: (template, options) => engine.validateTemplate(template, toThisRealm(options)) },
        free: { value: () => undefined },
      });
    }
  }
  shared = { ...validator, CompositeEngine };
  return shared;
}

class NodeEnvironmentWithSharedValidator extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.global[SHARED_VALIDATOR] = sharedValidator;
  }
}

module.exports = NodeEnvironmentWithSharedValidator;
