import { DuckDBInstance } from '@duckdb/node-api';
import { studentTQuantile, studentTTwoSidedP } from '../../src/stats/index.js';

/**
 * Seeded warehouse data and the answers an analysis must give, computed here from the raw rows with plain loops
 * (no SQL, no code of the warehouse module), so a wrong query or a wrong rule shows as a mismatch.
 */

export interface Exposure {
  user_id: string;
  variant: string;
  ts: Date;
  country: string;
}
export interface Event {
  user_id: string;
  ts: Date;
  amount: number | null;
}

export const WINDOW_START = new Date('2026-03-01T00:00:00Z');
export const WINDOW_END = new Date('2026-03-15T00:00:00Z');
export const CONVERSION_HOURS = 72;
export const CAP = 40;

function prng(seed: number) {
  let a = seed;
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HOUR = 3_600_000;

/** About 600 units: repeat exposures, units in both arms, exposures and events outside the window, NULL values. */
export function seedData(seed = 7) {
  const random = prng(seed);
  const exposures: Exposure[] = [];
  const events: Event[] = [];
  const span = WINDOW_END.getTime() - WINDOW_START.getTime();
  for (let i = 0; i < 600; i++) {
    const user = `u${i}`;
    const variant = random() < 0.5 ? 'control' : 'treatment';
    const country = random() < 0.8 ? 'DE' : 'FR';
    // A tenth are first seen before the window (their first exposure in the window is what counts).
    const first = new Date(WINDOW_START.getTime() + (random() < 0.1 ? -random() * 3 * 24 * HOUR : random() * span * 0.9));
    exposures.push({ user_id: user, variant, ts: first, country });
    if (random() < 0.3) exposures.push({ user_id: user, variant, ts: new Date(first.getTime() + random() * 48 * HOUR), country });
    if (random() < 0.03) exposures.push({ user_id: user, variant: variant === 'control' ? 'treatment' : 'control', ts: new Date(first.getTime() + HOUR), country });
    const rate = variant === 'treatment' ? 0.45 : 0.3;
    const n = random() < rate ? 1 + Math.floor(random() * 3) : 0;
    for (let k = 0; k < n; k++) {
      const offset = (random() * 130 - 10) * HOUR; // some before the exposure, some past the conversion window
      const amount = random() < 0.1 ? null : Math.round(random() * (variant === 'treatment' ? 30 : 22) * 100) / 100;
      events.push({ user_id: user, ts: new Date(first.getTime() + offset), amount });
    }
  }
  // Exposures after the window end and an event with no exposure at all.
  exposures.push({ user_id: 'late', variant: 'control', ts: new Date(WINDOW_END.getTime() + HOUR), country: 'DE' });
  events.push({ user_id: 'stranger', ts: new Date(WINDOW_START.getTime() + HOUR), amount: 5 });
  return { exposures, events };
}

export interface ExpectedArm {
  units: number;
  conversions: number;
  mean: number;
  values: number[];
}

/** The spec's rules with loops: first exposure in window, multi-variant units out, events in [exposure, min(+cw, end)). */
export function expected(
  data: { exposures: Exposure[]; events: Event[] },
  options: { country?: string; conversionHours: number | null; cap: number | null; valueMetric: boolean },
) {
  const inWindow = (d: Date) => d >= WINDOW_START && d < WINDOW_END;
  const firsts = new Map<string, { variants: Set<string>; at: Date; variant: string }>();
  for (const e of data.exposures) {
    if (!inWindow(e.ts) || (options.country && e.country !== options.country)) continue;
    const seen = firsts.get(e.user_id);
    if (!seen) firsts.set(e.user_id, { variants: new Set([e.variant]), at: e.ts, variant: e.variant });
    else {
      seen.variants.add(e.variant);
      if (e.ts < seen.at) seen.at = e.ts;
    }
  }
  const arms: Record<string, ExpectedArm> = {
    control: { units: 0, conversions: 0, mean: 0, values: [] },
    treatment: { units: 0, conversions: 0, mean: 0, values: [] },
  };
  let excluded = 0;
  for (const [user, seen] of firsts) {
    if (seen.variants.size > 1) {
      excluded++;
      continue;
    }
    const limit = options.conversionHours === null ? WINDOW_END.getTime() : Math.min(WINDOW_END.getTime(), seen.at.getTime() + options.conversionHours * HOUR);
    const mine = data.events.filter((e) => e.user_id === user && e.ts >= seen.at && e.ts.getTime() < limit);
    const arm = arms[seen.variant];
    arm.units++;
    if (mine.length > 0) arm.conversions++;
    let total = mine.reduce((s, e) => s + (e.amount ?? 0), 0);
    if (options.cap !== null) total = Math.min(total, options.cap);
    arm.values.push(total);
  }
  for (const arm of Object.values(arms)) {
    arm.mean = options.valueMetric ? arm.values.reduce((a, b) => a + b, 0) / arm.units : arm.conversions / arm.units;
  }
  return { arms, excluded };
}

function logFactorial(n: number): number {
  let s = 0;
  for (let i = 2; i <= n; i++) s += Math.log(i);
  return s;
}

/** Two-sided Fisher exact test by summing every table at most as likely as the observed one (R's rule). */
export function fisherByEnumeration(a: number, n1: number, c: number, n2: number): number {
  const k = a + c;
  const n = n1 + n2;
  const logP = (x: number) =>
    logFactorial(n1) + logFactorial(n2) + logFactorial(k) + logFactorial(n - k) -
    logFactorial(x) - logFactorial(n1 - x) - logFactorial(k - x) - logFactorial(n2 - k + x) - logFactorial(n);
  const observed = logP(a);
  let p = 0;
  for (let x = Math.max(0, k - n2); x <= Math.min(k, n1); x++) {
    const lp = logP(x);
    if (lp <= observed + 1e-7) p += Math.exp(lp);
  }
  return Math.min(1, p);
}

function sampleVariance(values: number[]): number {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return values.reduce((s, v) => s + (v - mean) ** 2, 0) / (values.length - 1);
}

/** Welch's t-test written out from the raw per-unit values. */
export function welchByHand(control: number[], treatment: number[]): number {
  const vc = sampleVariance(control) / control.length;
  const vt = sampleVariance(treatment) / treatment.length;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const t = (mean(treatment) - mean(control)) / Math.sqrt(vc + vt);
  const df = (vc + vt) ** 2 / (vc ** 2 / (control.length - 1) + vt ** 2 / (treatment.length - 1));
  return studentTTwoSidedP(t, df);
}

/** The 95% interval of one arm's mean. */
export function meanInterval(values: number[]): [number, number] {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const half = studentTQuantile(0.975, values.length - 1) * Math.sqrt(sampleVariance(values) / values.length);
  return [mean - half, mean + half];
}

/** Timestamp text both DuckDB and Postgres read as UTC wall time. */
export const sqlTime = (d: Date) => d.toISOString().replace('T', ' ').replace('Z', '');

/** A DuckDB file of the seeded tables (main.exposures, main.events), closed before the app opens it read only. */
export async function seedDuckDb(file: string): Promise<void> {
  const data = seedData();
  const instance = await DuckDBInstance.create(file);
  const c = await instance.connect();
  await c.run('CREATE TABLE exposures (user_id VARCHAR, variant VARCHAR, ts TIMESTAMP, country VARCHAR)');
  await c.run('CREATE TABLE events (user_id VARCHAR, ts TIMESTAMP, amount DOUBLE)');
  const appender = await c.createAppender('exposures');
  for (const e of data.exposures) {
    appender.appendVarchar(e.user_id);
    appender.appendVarchar(e.variant);
    appender.appendVarchar(sqlTime(e.ts));
    appender.appendVarchar(e.country);
    appender.endRow();
  }
  appender.closeSync();
  for (const e of data.events) {
    await c.run('INSERT INTO events VALUES ($1, CAST($2 AS TIMESTAMP), $3)', [e.user_id, sqlTime(e.ts), e.amount]);
  }
  c.closeSync();
  instance.closeSync();
}
