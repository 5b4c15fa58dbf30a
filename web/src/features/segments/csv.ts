/** The per-request cap of the members route (spec: 1 to 10,000 IDs per request, each 1 to 255 characters). */
export const IDS_PER_REQUEST = 10_000;
export const MAX_ID_LENGTH = 255;

/**
 * User IDs from a CSV file: the first column of every row, quotes removed, blanks and repeats dropped. A first row
 * named like a header (`user_id`, `id`, `userId`) is skipped. IDs longer than the API accepts are reported, not sent.
 */
export function parseIdCsv(text: string): { ids: string[]; tooLong: number } {
  const seen = new Set<string>();
  let tooLong = 0;
  const rows = text.split(/\r\n|\n|\r/);
  rows.forEach((row, index) => {
    const first = firstCell(row).trim();
    if (!first) return;
    if (index === 0 && /^(user[_ ]?id|id|userid)$/i.test(first)) return;
    if (first.length > MAX_ID_LENGTH) {
      tooLong += 1;
      return;
    }
    seen.add(first);
  });
  return { ids: [...seen], tooLong };
}

function firstCell(row: string): string {
  if (!row.startsWith('"')) return row.split(/[,;\t]/)[0];
  let cell = '';
  for (let i = 1; i < row.length; i += 1) {
    if (row[i] === '"') {
      if (row[i + 1] === '"') {
        cell += '"';
        i += 1;
      } else return cell;
    } else cell += row[i];
  }
  return cell;
}

export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
