import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Unit tests: `vscode` is the stand-in of test/vscode-stub.ts.
export default defineConfig({
  resolve: {
    alias: { vscode: fileURLToPath(new URL('./test/vscode-stub.ts', import.meta.url)) },
  },
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/e2e/**', 'node_modules/**'],
    environment: 'node',
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
