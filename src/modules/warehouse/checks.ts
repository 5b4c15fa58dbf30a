/** The warehouse service's input checks beyond the request schema (pure; each throws or returns 422 issues). */
import { isIP } from 'node:net';
import { Unprocessable, type Loc, type ValidationIssue } from '../../platform/errors.js';
import type { FieldSpec } from './connectors/types.js';
import { FILTER_TEXT, IDENTIFIER_RULES, isIdentifier, parseTable } from './identifiers.js';
import type { Window } from './plan.js';
import type { SourceCreate } from './schemas.js';
import type { WarehouseType } from './types.js';

const WINDOW_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?$/;

/**
 * A window time as sent: without an offset it is read as UTC (spec "Analysis request"). `new Date` alone rolls
 * impossible dates over (2026-02-30 became 2026-03-02) and reaches past year 9999 through the offset (a time that is
 * no longer RFC 3339 and fails the run later), so the calendar is checked field by field and the instant must fall in
 * years 1 to 9999 UTC. The refusal never repeats the value.
 */
export function parseWindowTime(text: string, loc: Loc): Date {
  const invalid = () => new Unprocessable({ type: 'datetime_parsing', loc, msg: 'Input should be a valid datetime' });
  const m = WINDOW_TIME.exec(text);
  if (!m) throw invalid();
  const [, y, mo, d, h, mi, sec = '00', fraction = '', zulu, sign, oh, om] = m;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, sec].map(Number) as [number, number, number, number, number, number];
  const daysInMonth = [31, isLeapYear(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
  const offsetHours = sign ? Number(oh) : 0;
  const offsetMinutes = sign ? Number(om) : 0;
  if (day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) throw invalid();
  const offset = zulu || !sign ? 'Z' : `${sign}${oh}:${om}`;
  const date = new Date(`${y}-${mo}-${d}T${h}:${mi}:${sec}${fraction.slice(0, 4)}${offset}`);
  if (Number.isNaN(date.getTime()) || date.getUTCFullYear() < 1 || date.getUTCFullYear() > 9999) throw invalid();
  return date;
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

export function checkFields(specs: Record<string, FieldSpec>, values: Record<string, unknown>, loc: Loc): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const key of Object.keys(values)) {
    if (!(key in specs)) issues.push({ type: 'extra_forbidden', loc: [...loc, key], msg: 'Extra inputs are not permitted' });
  }
  for (const [key, spec] of Object.entries(specs)) {
    const value = values[key];
    const at = [...loc, key];
    if (value === undefined || value === null || value === '') {
      if (spec.required) issues.push({ type: 'missing', loc: at, msg: 'Field required' });
      continue;
    }
    if (spec.kind === 'string' || spec.kind === 'host' || spec.kind === 'url') {
      if (typeof value !== 'string') issues.push({ type: 'string_type', loc: at, msg: 'Input should be a valid string' });
      else if (spec.maxLength && value.length > spec.maxLength) {
        issues.push({ type: 'string_too_long', loc: at, msg: `String should have at most ${spec.maxLength} characters`, ctx: { max_length: spec.maxLength } });
      } else if (spec.kind === 'host' && !isHost(value)) {
        issues.push({ type: 'host_name', loc: at, msg: 'Input should be a host name or an IP address (no scheme, port, path or user)' });
      } else if (spec.kind === 'url') {
        const problem = urlProblem(value);
        if (problem) issues.push({ ...problem, loc: at });
      }
    } else if (spec.kind === 'integer') {
      if (typeof value !== 'number' || !Number.isInteger(value)) issues.push({ type: 'int_type', loc: at, msg: 'Input should be a valid integer' });
      else if ((spec.min !== undefined && value < spec.min) || (spec.max !== undefined && value > spec.max)) {
        issues.push({ type: 'int_range', loc: at, msg: `Input should be from ${spec.min} to ${spec.max}` });
      }
    } else if (typeof value !== 'boolean') {
      issues.push({ type: 'bool_type', loc: at, msg: 'Input should be a valid boolean' });
    }
  }
  return issues;
}

const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/;

/** A host name or an IP address (an IPv6 one with or without brackets): nothing a driver could read as more. */
export function isHost(value: string): boolean {
  const bare = value.startsWith('[') && value.endsWith(']') ? value.slice(1, -1) : value;
  return isIP(bare) !== 0 || (bare === value && HOST_NAME.test(value));
}

/**
 * Why a URL setting is refused, without repeating it: not an http(s) URL, or user:password@ in it (a secret in a
 * setting would be shown and stored in clear; credentials have their own encrypted field).
 */
function urlProblem(value: string): Omit<ValidationIssue, 'loc'> | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { type: 'url_parsing', msg: 'Input should be a valid URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { type: 'url_scheme', msg: 'URL scheme should be http or https' };
  if (url.username || url.password) return { type: 'url_credentials', msg: 'The URL must not carry a user name or password; send them in credentials' };
  if (!url.hostname) return { type: 'url_parsing', msg: 'Input should be a valid URL' };
  return undefined;
}

export type SourceFields = Omit<SourceCreate, 'connection_id' | 'kind'>;

/** Checks a source definition against the warehouse's identifier rules and the issue's column conventions. */
export function checkSource(type: WarehouseType, kind: 'assignment' | 'metric', source: SourceFields): void {
  const issues: ValidationIssue[] = [];
  const rule = IDENTIFIER_RULES[type];
  if (!parseTable(type, source.table)) {
    issues.push({ type: 'table_name', loc: ['body', 'table'], msg: `Expected a fully qualified ${rule.tableForm}, each part a valid identifier for this warehouse` });
  }
  const required = kind === 'assignment' ? ['unit_id', 'variant', 'exposed_at'] : ['unit_id', 'event_at', ...(source.metric_type === 'mean' ? ['value'] : [])];
  const allowed = kind === 'assignment' ? required : ['unit_id', 'event_at', 'value', 'event_name'];
  const columns = source.columns as Record<string, string | undefined>;
  for (const key of required) {
    if (!columns[key]) issues.push({ type: 'missing', loc: ['body', 'columns', key], msg: 'Field required' });
  }
  for (const [key, column] of Object.entries(columns)) {
    if (column === undefined) continue;
    if (!allowed.includes(key)) issues.push({ type: 'extra_forbidden', loc: ['body', 'columns', key], msg: 'Extra inputs are not permitted' });
    else if (!isIdentifier(type, column)) issues.push({ type: 'identifier', loc: ['body', 'columns', key], msg: 'Not a valid column name for this warehouse' });
  }
  if (kind === 'assignment') {
    for (const field of ['metric_type', 'conversion_window_hours', 'cap_value'] as const) {
      if (source[field] !== undefined && source[field] !== null) {
        issues.push({ type: 'extra_forbidden', loc: ['body', field], msg: 'Only metric sources take this field' });
      }
    }
  } else if (source.cap_value !== undefined && source.cap_value !== null && source.metric_type !== 'mean') {
    issues.push({ type: 'not_applicable', loc: ['body', 'cap_value'], msg: 'cap_value applies to mean metrics only' });
  }
  (source.filters ?? []).forEach((filter, i) => {
    if (!isIdentifier(type, filter.column)) issues.push({ type: 'identifier', loc: ['body', 'filters', i, 'column'], msg: 'Not a valid column name for this warehouse' });
    if (typeof filter.value === 'string' && !FILTER_TEXT.test(filter.value)) {
      issues.push({ type: 'filter_value', loc: ['body', 'filters', i, 'value'], msg: 'A filter value may contain only letters, digits, spaces and _ . : @ / + -' });
    }
    if (typeof filter.value === 'number' && !Number.isFinite(filter.value)) {
      issues.push({ type: 'finite_number', loc: ['body', 'filters', i, 'value'], msg: 'Input should be a finite number' });
    }
  });
  if (issues.length) throw new Unprocessable(issues);
}

/** A window whose end is after its start (422 at body.window_end otherwise). */
export function orderedWindow(start: Date, end: Date): Window {
  if (start.getTime() >= end.getTime()) {
    throw new Unprocessable({ type: 'window_order', loc: ['body', 'window_end'], msg: 'window_end must be after window_start' });
  }
  return { start, end };
}
