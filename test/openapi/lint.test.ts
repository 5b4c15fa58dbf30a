import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

interface Problem { ruleId: string; severity: 'error' | 'warn'; message: string; location: Array<{ pointer: string }> }

/** The pinned @redocly/cli, recommended rules, with the spec's trailing-slash paths excepted (.redocly.lint-ignore.yaml). */
async function lint(file: string): Promise<{ code: number; problems: Problem[] }> {
  try {
    const { stdout } = await run(`${root}node_modules/.bin/redocly`, ['lint', file, '--format=json'], { cwd: root, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, problems: JSON.parse(stdout).problems };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, problems: JSON.parse(failed.stdout).problems };
  }
}

/** Findings that come from the spec's own route layout, and the spec's 501-only post-stratification route. */
const ALLOWED = new Set(['no-ambiguous-paths', 'info-license', 'operation-2xx-response']);

describe.each(['openapi/full.json', 'openapi/core.json'])('redocly lint %s', (file) => {
  it('passes the recommended rules: every operation has a summary, declared security and a 4xx answer', async () => {
    const { code, problems } = await lint(file);
    const unexpected = problems.filter((p) => !ALLOWED.has(p.ruleId)).map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
    expect(unexpected).toEqual([]);
    expect(code).toBe(0);
    const twoXx = problems.filter((p) => p.ruleId === 'operation-2xx-response').map((p) => p.location[0]?.pointer);
    expect(twoXx.every((pointer) => pointer.includes('post-stratification'))).toBe(true);
  }, 60_000);
});
