// ESLint for the whole repository, run by `npm run lint` (with Prettier in check mode) and by .ci/run. It lives beside
// dependency-cruiser's config because the repository's top level is fixed; `npm run lint` names it with --config.
// Type-aware: typescript-eslint reads every file through the project's tsconfig.json.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

const sources = ['router/**/*.ts', 'lib/**/*.ts', 'bin/**/*.ts', 'examples/**/*.ts'];
const tests = ['test/**/*.ts'];

export default tseslint.config(
  {
    ignores: ['**/node_modules/**', '**/dist/**', '**/cdk.out/**', 'lib/sidecar/**', 'coverage/**', '**/*.d.ts'],
  },
  // The recommended sets with type information: they catch the bugs a type checker alone lets through (floating and
  // misused promises, `any` flowing out of JSON.parse into typed code, awaiting non-promises, stringified objects).
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    files: [...sources, ...tests],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: `${import.meta.dirname}/..` },
    },
    rules: {
      // A dropped promise is an unhandled rejection waiting to take the router down: every one is awaited, returned,
      // or marked `void` where fire-and-forget is the intent (recommended already; stated so nobody turns it off).
      '@typescript-eslint/no-floating-promises': 'error',
      // Unused names are dead code or a forgotten use. `_`-prefixed parameters are kept for an interface's shape.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      // No `any` in what the packages export: it would switch type checking off in every user's code.
      '@typescript-eslint/no-explicit-any': 'error',
      // A `let` assigned once after a closure that reads it was declared stays a `let` (const would be read in its
      // temporal dead zone).
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // Rejections carry Errors; a caught value (typed unknown) is passed on as it was caught.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
    },
  },
  {
    files: sources,
    rules: {
      // A function longer than a screen mixes concerns; cut it into named parts (issue 36). Blank lines and comments
      // do not count. A function left longer says why on the line that turns this off.
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
  {
    files: tests,
    rules: {
      // Tests read wire bodies (`JSON.parse`, SDK responses) and assert on their fields: typing each body would add
      // declarations that the assertions already check, so `any` may flow inside a test. Never in shipped code.
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      // Test doubles implement async interfaces with synchronous bodies.
      '@typescript-eslint/require-await': 'off',
      // Tests load modules by computed path or into an isolated registry (jest.isolateModules), which needs require.
      '@typescript-eslint/no-require-imports': 'off',
      // Tests stringify loosely typed SDK inputs and fake-service fields; a wrong string fails the assertion reading it.
      '@typescript-eslint/no-base-to-string': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        require: 'readonly',
        module: 'writable',
        __dirname: 'readonly',
        __filename: 'readonly',
        process: 'readonly',
        console: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  // Formatting is Prettier's alone: turn off every stylistic rule that could disagree with it.
  prettier,
);
