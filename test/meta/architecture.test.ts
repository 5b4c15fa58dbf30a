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

  /**
   * docs/architecture.md, "Layers and dependency rules": a module reaches another only through its service, its read
   * model, its domain vocabulary, or its schemas (TypeBox shapes another module's routes answer with, style guide
   * section 2). Each entry below names a file that is one of those in all but name, or what is left to move.
   */
  it("a module imports another module's service, read-model, domain or schemas only", () => {
    const PUBLIC = new Set(['service.js', 'read-model.js', 'domain.js', 'schemas.js']);
    const ALLOWED: Record<string, string> = {
      // The users module's second service (identity-provider accounts), built apart in services.ts only when an
      // identity provider is configured; the auth module's identity-provider service is given it.
      'modules/auth/idp/service.ts -> users/idp-accounts.js': "users' identity-provider accounts service",
    };
    const offending: string[] = [];
    const seen = new Set<string>();
    for (const file of sourceFiles) {
      const own = moduleOf(file);
      if (own === undefined) continue;
      for (const specifier of importsOf(file).filter((s) => s.startsWith('.'))) {
        const target = resolve(dirname(file), specifier);
        const other = moduleOf(target);
        if (other === undefined || other === own) continue;
        const inside = relative(join(SRC, 'modules', other), target).split('\\').join('/');
        const edge = `${relative(SRC, file).split('\\').join('/')} -> ${other}/${inside}`;
        seen.add(edge);
        if (!PUBLIC.has(inside) && !(edge in ALLOWED)) offending.push(edge);
      }
    }
    expect(offending).toEqual([]);
    // An entry whose import is gone is removed, so the list says what is left.
    expect(Object.keys(ALLOWED).filter((edge) => !seen.has(edge))).toEqual([]);
  });
});
