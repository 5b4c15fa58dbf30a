import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
/** What the analysis package may import: itself, src/stats, TypeBox and the platform's pure schema helpers. */
const allowed = (spec: string) =>
  spec.startsWith('./') || spec.startsWith('../stats/') || spec === 'typebox' || spec === '../platform/schemas.js' || spec === 'vitest'
  || spec.startsWith('node:') || spec === 'fast-check';

describe('the analysis package', () => {
  it('imports nothing with I/O and nothing from a module (numbers in, numbers out)', () => {
    const offending: string[] = [];
    for (const file of readdirSync(here).filter((f) => f.endsWith('.ts'))) {
      const text = readFileSync(join(here, file), 'utf8');
      const isTest = file.endsWith('.test.ts');
      for (const [, spec] of text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*from\s+'([^']+)'/g)) {
        if (!allowed(spec) || (!isTest && (spec.startsWith('node:') || spec === 'vitest' || spec === 'fast-check'))) offending.push(`${file}: ${spec}`);
      }
    }
    expect(offending).toEqual([]);
  });
});
