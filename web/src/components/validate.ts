/**
 * Checks the dashboard runs before sending, mirroring the API's schemas (src/modules/*\/schemas.ts), so the
 * common mistakes are caught in the browser and said in the same words as the API's messages (api/messages.ts).
 */
const FLAG_KEY = /^[A-Za-z0-9_.:-]+$/;
const EXPERIMENT_KEY = /^[A-Za-z0-9][A-Za-z0-9_.:-]*$/;

export function requiredText(value: string, max = 255): string | undefined {
  if (!value.trim()) return 'This field is required.';
  if (value.length > max) return `Use at most ${max} characters.`;
  return undefined;
}

/** A flag key (also a variation key): 1 to 255 of letters, digits, _ . : - */
export function flagKeyProblem(value: string): string | undefined {
  if (!value) return 'This field is required.';
  if (value.length > 255) return 'Use at most 255 characters.';
  if (!FLAG_KEY.test(value)) return 'Use only letters, digits and the characters _ . : - (no spaces).';
  return undefined;
}

/** An experiment key: 1 to 100, starting with a letter or digit. */
export function experimentKeyProblem(value: string): string | undefined {
  if (!value) return 'This field is required.';
  if (value.length > 100) return 'Use at most 100 characters.';
  if (!EXPERIMENT_KEY.test(value)) return 'Start with a letter or digit, then use only letters, digits and _ . : - (no spaces).';
  return undefined;
}

/** The problems that are set, or null when there are none. */
export function problemsOf(checks: Record<string, string | undefined>): Record<string, string> | null {
  const found = Object.fromEntries(Object.entries(checks).filter((entry): entry is [string, string] => entry[1] !== undefined));
  return Object.keys(found).length ? found : null;
}
