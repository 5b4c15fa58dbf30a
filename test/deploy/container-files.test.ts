import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
/** src/config.ts parses the settings, with the parsers of src/config/. */
const configSource = [read('src/config.ts'), ...readdirSync(new URL('../../src/config/', import.meta.url)).map((f) => read(`src/config/${f}`))].join('\n');
/** A setting exists when the config reads it from the environment (`env.NAME` or `env, 'NAME'`). */
const isSetting = (name: string) => new RegExp(`env\\.${name}\\b|env, '${name}'`).test(configSource);

interface ComposeService { image?: string; build?: unknown; environment?: Record<string, string>; ports?: string[] }
const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, ComposeService> };
const upliftServices = Object.entries(compose.services).filter(([, s]) => s.build !== undefined || s.image?.startsWith('uplift'));
const dockerfile = read('Dockerfile');

describe('container files', () => {
  it('the compose file runs two Uplift instances behind a proxy, with PostgreSQL and Redis', () => {
    expect(upliftServices.map(([name]) => name).sort()).toEqual(['uplift-1', 'uplift-2']);
    expect(Object.keys(compose.services)).toEqual(expect.arrayContaining(['postgres', 'redis', 'proxy']));
    const nginx = read('deploy/nginx.conf');
    for (const [name] of upliftServices) expect(nginx).toContain(`server ${name}:8000`);
    for (const [, service] of upliftServices) {
      expect(service.environment?.DATABASE_URL).toMatch(/^postgres:\/\/.+@postgres:5432\//);
      expect(service.environment?.REDIS_URL).toBe('redis://redis:6379');
    }
  });

  it('every setting the compose file gives Uplift exists in src/config.ts', () => {
    const names = new Set(upliftServices.flatMap(([, s]) => Object.keys(s.environment ?? {})));
    expect(names.size).toBeGreaterThan(3);
    expect([...names].filter((n) => !isSetting(n))).toEqual([]);
  });

  it('every ENV of the Dockerfile is a setting in src/config.ts', () => {
    const names = [...dockerfile.matchAll(/^ENV (.+)$/gm)].flatMap((m) => [...m[1].matchAll(/([A-Z_][A-Z0-9_]*)=/g)].map((x) => x[1]));
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((n) => !isSetting(n))).toEqual([]);
  });

  it('the Dockerfile is multi-stage, installs production dependencies only, runs as a non-root user and checks /health', () => {
    expect(dockerfile.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/^RUN npm ci --omit=dev/m);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n?.*\/health/m);
    const node = /^FROM node:(\d+)/m.exec(dockerfile)?.[1];
    const engines = JSON.parse(read('package.json')).engines.node as string;
    expect(engines).toContain(`>=${node}`);
  });

  it('both stages copy every workspace manifest before npm ci (npm ci needs them) and the image holds the dashboard', () => {
    const workspaces = JSON.parse(read('package.json')).workspaces as string[];
    for (const ws of workspaces) expect(dockerfile.match(new RegExp(`^COPY ${ws}/package.json \\./${ws}/$`, 'gm'))).toHaveLength(2);
    expect(dockerfile).toContain('COPY --from=build /app/web/dist ./web/dist');
  });

  it('the test that checks settings knows real ones from unknown ones', () => {
    expect(isSetting('DATABASE_URL')).toBe(true);
    expect(isSetting('DATABASE_URI')).toBe(false);
  });
});
