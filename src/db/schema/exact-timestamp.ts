import { customType } from 'drizzle-orm/pg-core';

/**
 * A timestamptz read and written as an ISO string with microseconds (`2024-05-01T11:59:59.999999Z`). JavaScript
 * dates stop at milliseconds, and the spec sets an experiment's start_date "one microsecond before the new
 * end_date" when completing it, so these columns never pass through `Date`.
 */
export const exactTimestamp = customType<{ data: string; driverData: string | Date }>({
  dataType: () => 'timestamp with time zone',
  toDriver: (value) => value,
  fromDriver: (value) => (value instanceof Date ? isoMicros(value) : toIsoMicros(value)),
});

const TIMESTAMP = /^(\d{4})-(\d\d)-(\d\d)[ Tt](\d\d):(\d\d):(\d\d)(?:\.(\d+))?(?:([+-])(\d\d)(?::?(\d\d))?(?::?(\d\d))?|[Zz])?$/;

/**
 * Postgres' text form in any session time zone (`2024-05-01 13:59:59.5+02`), or an RFC 3339 date-time as sent,
 * to UTC ISO with six fraction digits (further digits are dropped: Postgres keeps microseconds).
 */
export function toIsoMicros(text: string): string {
  const m = TIMESTAMP.exec(text.trim());
  if (!m) throw new Error('Unrecognised timestamp');
  const [, y, mo, d, h, mi, s, fraction = '', sign, oh = '0', om = '0', os = '0'] = m;
  const offsetSeconds = sign ? (sign === '-' ? -1 : 1) * (Number(oh) * 3600 + Number(om) * 60 + Number(os)) : 0;
  // setUTCFullYear takes the year as written (Date.UTC reads 0 to 99 as 1900 to 1999).
  const utc = new Date(0);
  utc.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  utc.setUTCHours(Number(h), Number(mi), Number(s) - offsetSeconds);
  return `${utc.toISOString().slice(0, 19)}.${fraction.slice(0, 6).padEnd(6, '0')}Z`;
}

/** The UTC year of an RFC 3339 date-time (after its offset), for the year-1 floor of accepted date-times. */
export const utcYear = (text: string): number => Number(toIsoMicros(text).slice(0, 4));

/** A `Date` (from the clock) in the same ISO form. */
export const isoMicros = (date: Date): string => date.toISOString().replace('Z', '000Z');
