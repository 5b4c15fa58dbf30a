import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
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
    expect(existsSync(new URL(pkg.exports['.'].types, new URL('../', import.meta.url)))).toBe(true);
    expect(existsSync(new URL(pkg.exports['./browser'].types, new URL('../', import.meta.url)))).toBe(true);
  });
});
