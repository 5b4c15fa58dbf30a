/**
 * Regex targeting cost benchmark (issue #27): the CPU time of the worst accepted flag against the worst accepted
 * context, against the 50 ms target, and the issue's pattern before and after the caps. In process (targeting is pure
 * and runs on the event loop, so its CPU time is what stalls the server), measured with process.cpuUsage.
 *
 * Worst case: each candidate family of patterns is sized to the program-size cap, the context value to the longest a
 * search of it may read (MAX_REGEX_TEST_COST / program size), over several adversarial alphabets; every run uses
 * patterns never compiled before (a fresh lazy DFA, whose state building is the expensive part) and a new input. The
 * worst (family, alphabet) then fills a flag with MAX_REGEX_CONDITIONS regex conditions (OR, none matching, so every
 * one runs), evaluated as the server evaluates flags (compileFlag) and as tracking evaluates experiment rules
 * (evaluateRuleSet).
 * Run: npx tsx bench/regex.ts   (RUNS, default 15)
 */
import { loadavg } from 'node:os';
import { RE2JS } from 're2js';
import {
  compileFlag,
  evaluateRuleSet,
  MAX_CONTEXT_BYTES,
  MAX_REGEX_CONDITIONS,
  MAX_REGEX_PROGRAM_SIZE,
  MAX_REGEX_TEST_COST,
  checkTargetingContext,
  regexProblem,
  validateRuleSet,
  type FlagDefinition,
} from '../src/targeting/index.js';
import { machine, writeSection } from './lib.js';

const RUNS = Number(process.env.RUNS ?? 15);
const TARGET_MS = 50;
const ISSUE_PATTERN = '(?i)(?:(\\w+)\\s?){1,999}#';

function cpuMs(run: () => unknown): number {
  const start = process.cpuUsage();
  run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

let seed = 1;
function text(alphabet: string, length: number): string {
  let s = '';
  for (let i = 0; i < length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    s += alphabet[(seed >> 8) % alphabet.length];
  }
  return s;
}

/** A character no input contains, different for every pattern built: each pattern is new to the regex cache. */
let marker = 0xe000;
const fresh = () => String.fromCodePoint(marker++);

/** Families of pattern, by repetition count k; each ends in a class no input matches, so the search reads everything. */
const FAMILIES: Record<string, (k: number, end: string) => string> = {
  'DFA blow-up [ab]*a[ab]{k}': (k, end) => `[ab]*a[ab]{${k}}[#${end}]`,
  "issue's shape (?i)(?:(\\w+)\\s?){1,k}": (k, end) => `(?i)(?:(\\w+)\\s?){1,${k}}[#${end}]`,
  'any (?s).*a.{k}': (k, end) => `(?s).*a.{${k}}[#${end}]`,
  'letters (?i)\\pL{k}': (k, end) => `(?i)\\pL{${k}}[#${end}]`,
  'optional (?:a?){k}a{k}': (k, end) => `(?:a?){${k}}a{${k}}[#${end}]`,
};
const ALPHABETS = ['ab', 'a', 'ab #', 'word ', 'aé日Ω', 'Kk\u212a'];

/** The largest k whose pattern is accepted (program size within the cap). */
function largest(family: (k: number, end: string) => string): number {
  let k = 1;
  while (regexProblem(family(k + 1, fresh())) === null) k += 1;
  return k;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (ms: number) => ms.toFixed(1);

// ---- the issue's pattern, before and after -----------------------------------------------------

const attribute8k = 'word '.repeat(Math.floor((MAX_CONTEXT_BYTES - 32) / 5));
const issueCompiled = RE2JS.compile(ISSUE_PATTERN);
const before = cpuMs(() => issueCompiled.test(attribute8k));
const issueRules = { logical_operator: 'AND', groups: [{ logical_operator: 'AND', conditions: [{ attribute: 'bio', operator: 'regex', value: ISSUE_PATTERN }] }] };
const refusal = validateRuleSet(issueRules);
const storedIssueFlag: FlagDefinition = { key: 'issue', is_active: true, status: 'active', rollout_percentage: 100, targeting_rules: issueRules };
const after = cpuMs(() => compileFlag(storedIssueFlag).evaluate('u1', { bio: attribute8k }));
console.log(`issue pattern (${issueCompiled.programSize()} instructions) on ${attribute8k.length} characters: before ${fmt(before)} ms; after: refused ("${refusal}"), stored copy evaluates in ${fmt(after)} ms`);

// ---- one search: the worst accepted pattern against the longest text it may read ---------------

const loadBefore = loadavg()[0].toFixed(1);
const rulesOf = (patterns: string[]) => ({
  logical_operator: 'OR',
  groups: [{ logical_operator: 'OR', conditions: patterns.map((value) => ({ attribute: 'v', operator: 'regex', value })) }],
});
interface Search { family: string; alphabet: string; k: number; size: number; length: number; first: number; ms: number }
const searches: Search[] = [];
for (const [family, build] of Object.entries(FAMILIES)) {
  const k = largest(build);
  const size = RE2JS.compile(build(k, fresh())).programSize();
  const length = Math.floor(MAX_REGEX_TEST_COST / size) - 1;
  for (const alphabet of ALPHABETS) {
    const rules = rulesOf([build(k, fresh())]);
    const first = cpuMs(() => evaluateRuleSet(rules, { v: text(alphabet, length) }));
    const times = Array.from({ length: RUNS }, () => {
      const value = text(alphabet, length);
      return cpuMs(() => evaluateRuleSet(rules, { v: value }));
    });
    searches.push({ family, alphabet, k, size, length, first, ms: median(times) });
  }
}
searches.sort((a, b) => b.ms - a.ms);
const worst = searches[0];
console.table(searches.slice(0, 8).map((s) => ({ ...s, first: fmt(s.first), ms: fmt(s.ms) })));

// ---- the worst accepted flag: MAX_REGEX_CONDITIONS of the worst search, none matching -----------

/** The slowest first search: what a flag of new patterns costs once (cold rows). */
const worstFirst = [...searches].sort((a, b) => b.first - a.first)[0];
function worstFlag(of: Search = worst): FlagDefinition {
  const build = FAMILIES[of.family];
  const targeting_rules = rulesOf(Array.from({ length: MAX_REGEX_CONDITIONS }, () => build(of.k, fresh())));
  if (validateRuleSet(targeting_rules) !== null) throw new Error('the worst flag must be accepted');
  return { key: `worst-${marker}`, is_active: true, status: 'active', rollout_percentage: 100, targeting_rules };
}
function worstContext(): Record<string, unknown> {
  const context = { v: text(worst.alphabet, worst.length) };
  if (checkTargetingContext(context) !== null) throw new Error('the worst context must be accepted');
  return context;
}
// Steady state: one flag, its patterns used once (each lazy DFA set up), then a new context every evaluation, as an
// attacker sending crafted contexts would. Cold: a flag never evaluated before, its patterns new to the process.
const compiledFlag = compileFlag(worstFlag());
const interpretedFlag = worstFlag();
const firstCompiled = cpuMs(() => compiledFlag.evaluate('u1', worstContext()));
const firstInterpreted = cpuMs(() => evaluateRuleSet(interpretedFlag.targeting_rules, worstContext()));
const compiledRuns: number[] = [];
const interpretedRuns: number[] = [];
const coldRuns: number[] = [];
for (let r = 0; r < RUNS; r++) {
  const a = worstContext();
  compiledRuns.push(cpuMs(() => compiledFlag.evaluate('u1', a)));
  const b = worstContext();
  interpretedRuns.push(cpuMs(() => evaluateRuleSet(interpretedFlag.targeting_rules, b)));
  const cold = compileFlag(worstFlag(worstFirst));
  const c = { v: text(worstFirst.alphabet, worstFirst.length) };
  coldRuns.push(cpuMs(() => cold.evaluate('u1', c)));
}
const loadAfter = loadavg()[0].toFixed(1);
const maxCompiled = Math.max(...compiledRuns);
const maxInterpreted = Math.max(...interpretedRuns);
const verdict = (ms: number) => (ms <= TARGET_MS ? 'within' : 'OVER');
console.log(`worst accepted flag (${MAX_REGEX_CONDITIONS} x ${worst.family}, k=${worst.k}, ${worst.size} instructions, ${worst.length} characters of '${worst.alphabet}'):`);
console.log(`  compiled (flags): median ${fmt(median(compiledRuns))} ms, max ${fmt(maxCompiled)} ms; interpreted (experiments): median ${fmt(median(interpretedRuns))} ms, max ${fmt(maxInterpreted)} ms; target ${TARGET_MS} ms: ${verdict(Math.max(maxCompiled, maxInterpreted))}`);
console.log(`  first evaluation ever: compiled ${fmt(firstCompiled)} ms, interpreted ${fmt(firstInterpreted)} ms; cold flags (${worstFirst.family} on '${worstFirst.alphabet}', patterns new to the process): median ${fmt(median(coldRuns))} ms, max ${fmt(Math.max(...coldRuns))} ms`);

writeSection('regex', `## Regex targeting: the worst accepted flag (issue #27)

Machine: ${machine()}, shared with other work during the run (1-minute load average ${loadBefore} before and
${loadAfter} after the worst-flag runs): CPU time (process.cpuUsage) is less sensitive to it than wall time, but a
loaded CPU's caches make it vary. Command: \`npx tsx bench/regex.ts\` (RUNS=${RUNS}). In process: targeting is pure
and runs on the event loop, so its CPU time is what would stall the server.

Caps: a pattern compiles to at most ${MAX_REGEX_PROGRAM_SIZE} instructions; a search costs at most ${MAX_REGEX_TEST_COST.toLocaleString('en')} units
(program size × (characters + 1)), a costlier one is not run; an evaluation runs at most ${MAX_REGEX_CONDITIONS} regex conditions,
the segments' included. Worst case therefore ${MAX_REGEX_CONDITIONS} × ${MAX_REGEX_TEST_COST.toLocaleString('en')} = ${(MAX_REGEX_CONDITIONS * MAX_REGEX_TEST_COST).toLocaleString('en')} units.

The issue's pattern \`${ISSUE_PATTERN}\` (${issueCompiled.programSize()} instructions) on a ${attribute8k.length}-character attribute:
**${fmt(before)} ms** per search before; after, it is refused at validation ("${refusal}"), and a flag
stored with it evaluates in **${fmt(after)} ms** (the pattern is unusable, so the condition never runs).

Slowest single searches (each family sized to the program-size cap, the text to the longest a search of it may read;
"first" is the pattern's first search, which sets up its lazy DFA; then the median of ${RUNS} searches of new texts):

| pattern family | alphabet | k | instructions | characters | first CPU ms | CPU ms |
|---|---|---|---|---|---|---|
${searches.slice(0, 6).map((s) => `| ${s.family.replace(/\|/g, '\\|')} | \`${s.alphabet}\` | ${s.k} | ${s.size} | ${s.length} | ${fmt(s.first)} | ${fmt(s.ms)} |`).join('\n')}

Worst accepted flag: ${MAX_REGEX_CONDITIONS} conditions of the slowest family (OR, none matching: all run), a new context holding
the longest text they may read at every evaluation (${RUNS} runs):

| evaluation | median CPU ms | max CPU ms | target |
|---|---|---|---|
| compiled (feature flags, SDK) | ${fmt(median(compiledRuns))} | ${fmt(maxCompiled)} | ${TARGET_MS} ms: ${verdict(maxCompiled)} |
| interpreted (experiment targeting, segment routes) | ${fmt(median(interpretedRuns))} | ${fmt(maxInterpreted)} | ${TARGET_MS} ms: ${verdict(maxInterpreted)} |
| cold: ${MAX_REGEX_CONDITIONS} × ${worstFirst.family.replace(/\|/g, '\\|')} on \`${worstFirst.alphabet}\`, patterns new to the process | ${fmt(median(coldRuns))} | ${fmt(Math.max(...coldRuns))} | one-off per pattern and process |

The cold row adds each pattern's one-off set-up (re2js builds the lazy DFA's character classes on first use, longer
for case-folded Unicode classes); compiled patterns stay cached (LRU of 4,096), so it recurs only when a new
pattern is written or evicted.`);
