import { defineProject } from 'vitest/config';
import react from '@vitejs/plugin-react';

export default defineProject({
  plugins: [react()],
  test: {
    name: 'web',
    root: import.meta.dirname,
    include: ['src/**/*.test.tsx', 'src/**/*.test.ts'],
    environment: 'happy-dom',
    environmentOptions: { happyDOM: { url: 'http://localhost/' } },
    setupFiles: ['./src/test-setup.ts'],
    // As the API project (root vitest.config.ts, not inherited here): typing tests outlast 5 s on a loaded machine.
    testTimeout: 30_000,
  },
});
