import { defineConfig } from 'vitest/config';

// The slow fault tests (`npm run test:faults`): kept out of `npm test`, run by CI.
export default defineConfig({
  test: {
    include: ['test/faults/**/*.slow.test.ts'],
    testTimeout: 240_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // The command line runs dist/, as users run it: built first when missing or stale.
    globalSetup: ['test/global-setup.ts'],
  },
});
