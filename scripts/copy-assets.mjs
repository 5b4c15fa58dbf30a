// Copies non-TypeScript runtime files (SQL migrations) next to the compiled code in dist/.
import { cpSync } from 'node:fs';

cpSync('src/db/migrations', 'dist/src/db/migrations', { recursive: true });
