import { defineConfig } from 'vitest/config';

// The end-to-end test: a real code-server driven by Chromium (see scripts/e2e.sh).
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.test.ts'],
    environment: 'node',
    testTimeout: 240_000,
    hookTimeout: 180_000,
    fileParallelism: false,
    sequence: { concurrent: false },
  },
});
