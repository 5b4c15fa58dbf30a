import type { Segment } from '../segments/hooks';

/**
 * The API key the evaluate panel uses. The evaluate route takes only an API key (spec: "API key"), so the panel
 * needs one, and it keeps the one it has: per account, in this browser (beside the session token), so a new tab or
 * a new sign-in reuses it instead of creating another. It is only ever created when the user asks.
 */
export const PANEL_KEY_NAME = 'Dashboard evaluate panel';
const storageKey = (userId: string) => `uplift.evaluate-key.${userId}`;

export function loadPanelKey(userId: string | undefined): string {
  if (!userId) return '';
  try {
    return window.localStorage.getItem(storageKey(userId)) ?? '';
  } catch {
    return '';
  }
}

export function savePanelKey(userId: string | undefined, value: string): void {
  if (!userId) return;
  try {
    if (value) window.localStorage.setItem(storageKey(userId), value);
    else window.localStorage.removeItem(storageKey(userId));
  } catch {
    // Storage refused (private mode): the key lives as long as the page.
  }
}

/**
 * The matched-rule text of an evaluation names segments by id (`segment in_segment 5f0c…`): name them instead,
 * `in segment “Beta testers”`. Ids the list does not hold (deleted, or not readable) stay as they are.
 */
export function nameSegments(rule: string, segments: ReadonlyArray<Pick<Segment, 'id' | 'name'>>): string {
  const names = new Map(segments.map((s) => [s.id, s.name]));
  return rule.replace(/(?:\S+ )?(not_in_segment|in_segment) ([0-9a-fA-F-]{36})/g, (whole, operator: string, id: string) => {
    const name = names.get(id);
    if (name === undefined) return whole;
    return `${operator === 'in_segment' ? 'in' : 'not in'} segment “${name}”`;
  });
}
