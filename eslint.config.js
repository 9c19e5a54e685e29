// `npm run lint`, part of `npm test`. Type-aware rules (typescript-eslint) catch what tsc does not:
// promises left floating or passed where a callback's result is ignored, awaits of non-promises,
// needless assertions, unused code.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // Built output and files this repository does not write.
  { ignores: ['dist/', 'data/', 'node_modules/', 'bench/results*.json'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // The files that tsconfig.json includes, plus the few config files it leaves out.
        projectService: { allowDefaultProject: ['vitest.faults.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      // Objects here are built by closures (createX factories) and kysely's expression builder is
      // destructured by design: no method passed around depends on `this`.
      '@typescript-eslint/unbound-method': 'off',
      // `async` without `await` is how a synchronous body meets a Promise-returning interface
      // (a Notifier's send, a scheduled task), so that a throw becomes a rejection.
      '@typescript-eslint/require-await': 'off',
      // It flags String(x) on values narrowed from `unknown`, where String() is the deliberate
      // fallback after objects were handled; template literals stay checked.
      '@typescript-eslint/no-base-to-string': 'off',
      // Terminal control characters are stripped on purpose (render/escape.ts and its tests).
      'no-control-regex': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    // Migrations are typed Kysely<any> on purpose: frozen in time, they import no app types.
    files: ['migrations/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Tests read response bodies as loose JSON and check them with expect(): the assertion is the
    // type check, so unsafe-any access is the point there, not a hole.
    files: ['test/**'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // The build script, the bin stub and node's loader hooks are plain JavaScript that tsc does not
    // check: no types to lint with; node's globals instead.
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly' },
    },
  },
);
