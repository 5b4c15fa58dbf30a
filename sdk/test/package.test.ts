import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The built package (npm install / npm run build:sdk): ESM and CJS entries that work, with no runtime imports.
const dist = new URL('../dist/', import.meta.url);
const bootstrap = {
  bucketing: { name: 'murmur3_32', version: 1 },
  flags: [{ id: 'f', key: 'on', status: 'active' as const, is_active: true, rollout_percentage: 100, targeting_rules: null, default_value: false }],
  segments: [],
};

describe('@uplift/sdk package', () => {
  it('is built', () => {
    expect(existsSync(new URL('index.js', dist)), 'run npm run build:sdk').toBe(true);
  });

  it('loads as ESM and as CommonJS, both entries', async () => {
    const esm = (await import(new URL('index.js', dist).href)) as typeof import('../src/index.js');
    const cjs = createRequire(import.meta.url)('../dist/index.cjs') as typeof import('../src/index.js');
    for (const { Uplift } of [esm, cjs]) {
      const client = new Uplift({ baseUrl: 'http://x.invalid', apiKey: 'k', bootstrap, updates: 'off' });
      expect(client.isEnabled('on', 'u')).toBe(true);
      await client.close();
    }
    expect(typeof ((await import(new URL('browser.js', dist).href)) as typeof import('../src/browser.js')).UpliftBrowser).toBe('function');
    expect(typeof (createRequire(import.meta.url)('../dist/browser.cjs') as typeof import('../src/browser.js')).UpliftBrowser).toBe('function');
  });

  it('has no runtime dependency: the bundles import and require nothing, and declare types', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
    expect(pkg.dependencies ?? {}).toEqual({});
    for (const file of readdirSync(dist).filter((f) => /\.(c?js)$/.test(f))) {
      const code = readFileSync(new URL(file, dist), 'utf8');
      // (Lines of doc comments, `* @param {import('./x')...}` in re2js, are not code.)
      expect(code, file).not.toMatch(/^[^*\n]*\b(require|import)\(["']|^import .* from ["']/m);
    }
    for (const entry of ['.', './browser']) {
      for (const condition of ['import', 'require']) {
        expect(existsSync(new URL(pkg.exports[entry][condition].types, new URL('../', import.meta.url))), `${entry} ${condition}`).toBe(true);
      }
    }
  });

  it('type-checks in a CommonJS TypeScript project (module node16), through require', () => {
    const project = mkdtempSync(join(tmpdir(), 'uplift-cjs-'));
    try {
      mkdirSync(join(project, 'node_modules', '@uplift'), { recursive: true });
      symlinkSync(fileURLToPath(new URL('../', import.meta.url)), join(project, 'node_modules', '@uplift', 'sdk'), 'dir');
      writeFileSync(join(project, 'package.json'), '{ "type": "commonjs" }');
      writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'node16', moduleResolution: 'node16', strict: true, noEmit: true, types: [] }, files: ['index.ts'] }));
      writeFileSync(join(project, 'index.ts'), [
        "import { Uplift, type FlagEvaluation } from '@uplift/sdk';",
        "import { UpliftBrowser } from '@uplift/sdk/browser';",
        "const client = new Uplift({ baseUrl: 'http://x.invalid', apiKey: 'k', updates: 'off' });",
        "const answer: FlagEvaluation = client.evaluate('on', 'u');",
        'export const used = [answer, UpliftBrowser];',
      ].join('\n'));
      const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
      const run = spawnSync(process.execPath, [tsc, '-p', project], { encoding: 'utf8' });
      expect(run.stdout + run.stderr).toBe('');
      expect(run.status).toBe(0);
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});
