import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';

/**
 * Issue 31: `npm install` on Node 20 warned EBADENGINE (content-disposition 3 and cookie 2 want Node 22). Every
 * package the lock file installs must accept the Node versions package.json's engines allow (checked at 20.19, the
 * oldest Node 20 the dependencies support); overrides in package.json pin versions that do.
 */
const require = createRequire(import.meta.url);
const semver = require('semver') as { satisfies(version: string, range: string): boolean };

describe('install on Node 20', () => {
  it('no installed package wants a newer Node than 20', () => {
    const lock = JSON.parse(readFileSync(new URL('../../package-lock.json', import.meta.url), 'utf8')) as {
      packages: Record<string, { engines?: { node?: string } | string[] }>;
    };
    const refusing = Object.entries(lock.packages).flatMap(([path, p]) => {
      const node = Array.isArray(p.engines) ? undefined : p.engines?.node;
      return typeof node === 'string' && !semver.satisfies('20.19.0', node) ? [`${path} (node ${node})`] : [];
    });
    expect(refusing).toEqual([]);
  });
});
