import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module of the start script, without types.
import { needsBuild } from '../../scripts/build-stamp.mjs';

/** Issue 31: `npm start` compiled TypeScript on every start; it builds only when a source is newer than the last build. */
const root = mkdtempSync(join(tmpdir(), 'uplift-stamp-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const at = (path: string, seconds: number) => utimesSync(join(root, path), seconds, seconds);

describe('npm start builds once', () => {
  it('runs the start script, not an unconditional build', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toBe('node scripts/start.mjs');
  });

  it('builds with no stamp, not when the stamp is newer than every source, again when a source changes', () => {
    mkdirSync(join(root, 'src', 'modules'), { recursive: true });
    writeFileSync(join(root, 'src', 'modules', 'a.ts'), 'export {};');
    writeFileSync(join(root, 'package.json'), '{}');
    at('src/modules/a.ts', 1_000);
    at('src/modules', 1_000);
    at('src', 1_000);
    at('package.json', 1_000);
    expect(needsBuild(root)).toBe(true);
    mkdirSync(join(root, 'dist'));
    writeFileSync(join(root, 'dist', '.build-stamp'), 'built');
    at('dist/.build-stamp', 2_000);
    expect(needsBuild(root)).toBe(false);
    at('src/modules/a.ts', 3_000);
    expect(needsBuild(root)).toBe(true);
  });
});
