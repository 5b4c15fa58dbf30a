// Whether the service must be built again: a source (or build setting) newer than the last build's stamp, which
// scripts/copy-assets.mjs writes as the build's last step. Used by scripts/start.mjs (`npm start`).
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const STAMP = join('dist', '.build-stamp');
export const INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'scripts/copy-assets.mjs'];

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

export function needsBuild(root) {
  const stamp = newest(join(root, STAMP));
  return stamp === 0 || INPUTS.some((input) => newest(join(root, input)) > stamp);
}
