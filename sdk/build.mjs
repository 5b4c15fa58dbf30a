// Builds @uplift/sdk: ESM and CJS bundles (the pure src/targeting code and re2js bundled in, so the package has no
// runtime dependencies) and type declarations.
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

const here = new URL('.', import.meta.url).pathname;
rmSync(`${here}dist`, { recursive: true, force: true });
const entries = { index: `${here}src/index.ts`, browser: `${here}src/browser.ts` };
for (const format of ['esm', 'cjs']) {
  await build({
    entryPoints: entries,
    outdir: `${here}dist`,
    outExtension: { '.js': format === 'esm' ? '.js' : '.cjs' },
    bundle: true,
    format,
    platform: 'neutral',
    mainFields: ['module', 'main'],
    target: 'es2020',
    sourcemap: true,
    legalComments: 'linked',
    logLevel: 'warning',
  });
}
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', `${here}tsconfig.json`], { stdio: 'inherit' });
// The declarations again for `require`: in this "type": "module" package a .d.ts is an ES module, which a CommonJS
// TypeScript project (module node16/nodenext) may not require; a package.json of "type": "commonjs" in the copy makes
// the same files CommonJS declarations.
cpSync(`${here}dist/types`, `${here}dist/types-cjs`, { recursive: true });
writeFileSync(`${here}dist/types-cjs/package.json`, '{ "type": "commonjs" }\n');
