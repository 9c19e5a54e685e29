import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Slow fault tests run by `npm run test:faults` (vitest.faults.config.ts).
    exclude: ['**/node_modules/**', 'test/**/*.slow.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // The command line runs dist/, as users run it: built first when missing or stale.
    globalSetup: ['test/global-setup.ts'],
  },
});
