// Builds @uplift/openfeature-provider: ESM and CJS bundles of this package only (@uplift/sdk and the OpenFeature
// SDK stay imports) and type declarations.
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

const here = new URL('.', import.meta.url).pathname;
rmSync(`${here}dist`, { recursive: true, force: true });
for (const format of ['esm', 'cjs']) {
  await build({
    entryPoints: { index: `${here}src/index.ts` },
    outdir: `${here}dist`,
    outExtension: { '.js': format === 'esm' ? '.js' : '.cjs' },
    bundle: true,
    external: ['@uplift/sdk', '@openfeature/server-sdk'],
    format,
    platform: 'node',
    target: 'es2020',
    sourcemap: true,
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
