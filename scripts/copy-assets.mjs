// Copies non-TypeScript runtime files (SQL migrations) next to the compiled code in dist/, and marks the CLI executable.
import { chmodSync, cpSync, writeFileSync } from 'node:fs';

cpSync('src/db/migrations', 'dist/src/db/migrations', { recursive: true });
// The `uplift` bin must be executable (tsc writes files without the mode).
chmodSync('dist/src/cli/main.js', 0o755);
// The build's stamp: `npm start` (scripts/start.mjs) builds again only when a source is newer than it.
writeFileSync('dist/.build-stamp', `${new Date().toISOString()}\n`);
