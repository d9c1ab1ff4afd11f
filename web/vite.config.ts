/// <reference types="vitest/config" />
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// The built app is plain static files plus a /config.json written by whoever
// serves it (the deploy, or `make dev`). The dev server needs no backend to
// start; set UNSCHEDULE_DEV_BACKEND (e.g. http://localhost:8080) to forward
// /config.json and the API paths to a running backend such as `make dev`.
const backend = process.env.UNSCHEDULE_DEV_BACKEND;
const proxied = ['/config.json', '/tasks', '/local-auth', '/campaigns'];

export default defineConfig({
  base: './',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true },
  server: backend
    ? { proxy: Object.fromEntries(proxied.map((p) => [p, { target: backend, changeOrigin: true }])) }
    : {},
  test: {
    environment: 'node',
    include: ['src/**/*.test.{ts,tsx}'],
  },
});
