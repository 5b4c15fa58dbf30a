import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/** The dependency rules of docs/architecture.md that can be read off the import lines of src/. */
const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

/** The module specifiers a source file imports or re-exports (static and dynamic). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'"]*?\bfrom\s*['"]([^'"]+)['"]/g), ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)];
  return specifiers.map((m) => m[1]);
}

const sourceFiles = (readdirSync(SRC, { recursive: true }) as string[])
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
  .map((f) => join(SRC, f));

/** `modules/<name>` for a file inside a module, else undefined. */
const moduleOf = (file: string) => /^modules\/([^/]+)\//.exec(relative(SRC, file).split('\\').join('/'))?.[1];

describe('architecture rules', () => {
  it('reads the import lines it checks', () => {
    expect(importsOf(join(SRC, 'services.ts'))).toContain('./modules/counters/service.js');
  });

  it('src/services.ts constructs only: it imports no store and no table (each module picks its own storage)', () => {
    const offending = importsOf(join(SRC, 'services.ts')).filter((s) => /(^|\/)store\.js$/.test(s) || s.includes('/db/schema'));
    expect(offending).toEqual([]);
  });

  it("a module's store is imported only inside that module", () => {
    const offending: string[] = [];
    for (const file of sourceFiles) {
      for (const specifier of importsOf(file).filter((s) => /(^|\/)store\.js$/.test(s) && s.startsWith('.'))) {
        const target = resolve(dirname(file), specifier);
        const owner = moduleOf(target);
        if (owner === undefined || owner !== moduleOf(file)) offending.push(`${relative(SRC, file)} imports ${specifier}`);
      }
    }
    expect(offending).toEqual([]);
  });
});
