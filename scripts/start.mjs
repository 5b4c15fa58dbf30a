// `npm start`: builds the service only when a source changed since the last build (`npm install` already builds),
// then runs it in this process (the same as `node dist/src/main.js`).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { needsBuild } from './build-stamp.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
if (needsBuild(root)) {
  process.stderr.write('Sources changed since the last build: building (npm run build)...\n');
  execFileSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
}
await import(pathToFileURL(join(root, 'dist', 'src', 'main.js')).href);
