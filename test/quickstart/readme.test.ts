import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../helpers/test-app.js';

/**
 * The README's quick start, run as written: its shell blocks in one bash session (variables carry from step to
 * step) against a started server, each step's output compared with the answer the README shows under it.
 */
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const section = /<!-- quickstart:start -->([\s\S]*?)<!-- quickstart:end -->/.exec(readme)?.[1] ?? '';

interface Step { title: string; script: string; answer: string; kind: string }

function steps(): Step[] {
  const found: Step[] = [];
  const re = /^#### (.+)\n[\s\S]*?```sh\n([\s\S]*?)```\n[\s\S]*?```(json|text)\n([\s\S]*?)```/gm;
  for (const m of section.matchAll(re)) found.push({ title: m[1], script: m[2], kind: m[3], answer: m[4].trim() });
  return found;
}

/** The start command's settings (`NAME=value ... npm start`), as the README gives them. */
function startSettings(): Record<string, string> {
  const line = /^((?:[A-Z_]+=\S+ )+)npm start$/m.exec(section)?.[1] ?? '';
  return Object.fromEntries([...line.matchAll(/([A-Z_]+)=('([^']*)'|\S+)/g)].map((m) => [m[1], m[3] ?? m[2]]));
}

function runBash(script: string, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-o', 'pipefail', '-c', script], { cwd });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

describe('README quick start', () => {
  let t: TestApp;
  let base: string;
  const work = mkdtempSync(join(tmpdir(), 'uplift-quickstart-'));
  beforeAll(async () => {
    t = await testApp({ env: { RATE_LIMIT_ENABLED: 'true' } });
    const settings = startSettings();
    expect(settings.FIRST_SUPERUSER_EMAIL).toBeTruthy();
    // What npm start does with these settings at boot.
    await t.services.users.ensureSuperuser({
      email: settings.FIRST_SUPERUSER_EMAIL,
      password: settings.FIRST_SUPERUSER_PASSWORD,
      username: settings.FIRST_SUPERUSER_USERNAME ?? 'admin',
    });
    base = (await t.app.listen({ host: '127.0.0.1', port: 0 })).replace('http://', '');
  });
  afterAll(async () => {
    await t.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('has steps, each with a shell block and the answer it prints', () => {
    expect(steps().length).toBeGreaterThanOrEqual(6);
  });

  it('every step prints the answer the README shows', async () => {
    const all = steps();
    const script = all
      .map((s, i) => `echo "@@step ${i}@@"\n${s.script.replaceAll('localhost:8000', base)}`)
      .join('\n');
    const { code, stdout, stderr } = await runBash(`set -e\n${script}`, work);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const outputs = stdout.split(/^@@step \d+@@\n/m).slice(1);
    expect(outputs).toHaveLength(all.length);
    all.forEach((step, i) => {
      const printed = outputs[i].trim();
      if (step.kind === 'json') {
        const lines = printed.split('\n').filter(Boolean);
        const wanted = step.answer.split('\n').filter(Boolean);
        expect({ step: step.title, answer: lines.map((l) => JSON.parse(l)) }).toEqual({ step: step.title, answer: wanted.map((l) => JSON.parse(l)) });
      } else {
        expect({ step: step.title, answer: printed }).toEqual({ step: step.title, answer: step.answer });
      }
    });
  }, 120_000);
});
