import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// The API serves the built files at `/`; in `npm run dev -w web` the dev server proxies the API to a local instance.
export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, assetsDir: 'assets', chunkSizeWarningLimit: 1500 },
  server: { proxy: { '/api': 'http://127.0.0.1:8000', '/health': 'http://127.0.0.1:8000' } },
});
