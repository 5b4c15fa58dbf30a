// Builds @uplift/openfeature-provider: ESM and CJS bundles of this package only (@uplift/sdk and the OpenFeature
// SDK stay imports) and type declarations.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
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
