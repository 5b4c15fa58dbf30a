// `npm start`: builds the service only when a source changed since the last build (`npm install` already builds),
// then runs it in this process (the same as `node dist/src/main.js`).
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const STAMP = join(root, 'dist', '.build-stamp');
const INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'scripts/copy-assets.mjs'];

/** The newest modification time under a file or directory (0 when it does not exist). */
function newest(path) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let max = stat.mtimeMs;
  for (const entry of readdirSync(path)) max = Math.max(max, newest(join(path, entry)));
  return max;
}

export function needsBuild() {
  const stamp = newest(STAMP);
  return stamp === 0 || INPUTS.some((input) => newest(join(root, input)) > stamp);
}

if (needsBuild()) {
  process.stderr.write('Sources changed since the last build: building (npm run build)...\n');
  execFileSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
}
await import(pathToFileURL(join(root, 'dist', 'src', 'main.js')).href);
