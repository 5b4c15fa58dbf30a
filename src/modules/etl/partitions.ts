/**
 * Hourly partition values for one day, for the Hive-style partition keys a Glue table may use: `dt`/`date`/`ds`
 * (YYYY-MM-DD) or `year`/`month`/`day`, plus `hour` (HH).
 */
export const DATE_FORMAT_MESSAGE = 'date must be a calendar date in YYYY-MM-DD format';

/** The date if `text` is a real calendar day in YYYY-MM-DD form (2024-02-30 is not). */
export function parseCalendarDate(text: string): { year: string; month: string; day: string } | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return undefined;
  const [, year, month, day] = match;
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  const real = date.getUTCFullYear() === Number(year) && date.getUTCMonth() === Number(month) - 1 && date.getUTCDate() === Number(day);
  return real ? { year, month, day } : undefined;
}

const DATE_KEYS = new Set(['dt', 'date', 'ds']);

/** The 24 value lists in key order, or undefined when the keys are not an hourly scheme this service knows. */
export function hourlyPartitionValues(keys: string[], date: { year: string; month: string; day: string }): string[][] | undefined {
  const names = keys.map((k) => k.toLowerCase());
  const hasDay = names.some((n) => DATE_KEYS.has(n)) || ['year', 'month', 'day'].every((n) => names.includes(n));
  if (!names.includes('hour') || !hasDay) return undefined;
  const valueFor = (name: string, hour: string): string | undefined => {
    if (DATE_KEYS.has(name)) return `${date.year}-${date.month}-${date.day}`;
    const values: Record<string, string> = { year: date.year, month: date.month, day: date.day, hour };
    return Object.hasOwn(values, name) ? values[name] : undefined;
  };
  const partitions: string[][] = [];
  for (let h = 0; h < 24; h++) {
    const hour = String(h).padStart(2, '0');
    const values = names.map((n) => valueFor(n, hour));
    if (values.some((v) => v === undefined)) return undefined;
    partitions.push(values as string[]);
  }
  return partitions;
}

/** `<table location>/key=value/.../` */
export function partitionLocation(tableLocation: string, keys: string[], values: string[]): string {
  return `${tableLocation.replace(/\/+$/, '')}/${keys.map((k, i) => `${k}=${values[i]}`).join('/')}/`;
}
