/**
 * Export date filters: inclusive bounds on created_at (spec rule 4). A bound is an ISO 8601 date-time (no offset
 * means UTC) or a calendar date; a date as end_date includes that whole day. Bounds are kept as text so the
 * database compares them at its own microsecond precision.
 */
import type { CreatedPeriod } from '../../db/paging.js';
import { Unprocessable } from '../../platform/errors.js';

/** created_at bounds: start and endInclusive as sent; an end given as a calendar date is endExclusive, the next day's start. */
export type Period = CreatedPeriod;

export const START_AFTER_END = 'Value error, start_date must not be after end_date';
const INVALID = { type: 'datetime_parsing', msg: 'Input should be a valid datetime or date' };

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,6})?)?([Zz]|[+-]\d{2}:?\d{2})?)?$/;
const DAY_MS = 86_400_000;

interface Bound {
  text: string;
  at: Date;
  isDate: boolean;
}

function parseBound(raw: string, field: string): Bound {
  const m = DATE_TIME.exec(raw.trim());
  const fail = () => new Unprocessable({ ...INVALID, loc: ['query', field] });
  if (!m) throw fail();
  const [, y, mo, d, h, mi, s = '00', fraction = '', zone] = m;
  const isDate = h === undefined;
  const offset = !zone || zone.toUpperCase() === 'Z' ? 'Z' : zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone;
  const text = isDate ? `${y}-${mo}-${d}T00:00:00Z` : `${y}-${mo}-${d}T${h}:${mi}:${s}${fraction}${offset}`;
  const at = new Date(text);
  // Date rolls 2024-02-30 over into March; a calendar check on the parts refuses it instead.
  const calendar = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (Number.isNaN(at.getTime()) || calendar.getUTCMonth() !== Number(mo) - 1 || Number(h ?? 0) > 23 || Number(mi ?? 0) > 59 || Number(s) > 59) {
    throw fail();
  }
  return { text, at, isDate };
}

export function parsePeriod(startDate: string | undefined, endDate: string | undefined): Period {
  const start = startDate === undefined ? undefined : parseBound(startDate, 'start_date');
  const end = endDate === undefined ? undefined : parseBound(endDate, 'end_date');
  if (start && end && start.at.getTime() > end.at.getTime()) {
    throw new Unprocessable({ type: 'value_error', loc: ['query', 'start_date'], msg: START_AFTER_END });
  }
  return {
    start: start?.text ?? null,
    endInclusive: end && !end.isDate ? end.text : null,
    endExclusive: end?.isDate ? new Date(end.at.getTime() + DAY_MS).toISOString() : null,
  };
}

/** The period's bounds as instants for the overview (period_end of a date is the last moment of that day). */
export function periodBounds(period: Period): { start: Date | null; end: Date | null } {
  const end = period.endInclusive ? new Date(period.endInclusive) : period.endExclusive ? new Date(new Date(period.endExclusive).getTime() - 1) : null;
  return { start: period.start ? new Date(period.start) : null, end };
}
