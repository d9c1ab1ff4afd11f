// CSV as RFC 4180 writes it (https://www.rfc-editor.org/rfc/rfc4180):
// CRLF after each record; a field holding a comma, a double quote, CR or LF
// is enclosed in double quotes, with each quote doubled. Text a spreadsheet
// would run as a formula (a cell starting with = + - @, or tab or CR) gets a
// leading ' so it stays text (OWASP "CSV Injection"). Numbers are written as
// they are: -5 is a number, not a formula.
import { timingOf } from './campaignProgress';
import type { Send } from './campaigns';

export type Cell = string | number | null | undefined;

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

export function csvCell(v: Cell): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : '';
  const text = FORMULA_START.test(v) ? `'${v}` : v;
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function encodeCsv(rows: readonly (readonly Cell[])[]): string {
  return rows.map((r) => `${r.map(csvCell).join(',')}\r\n`).join('');
}

/**
 * The sends as CSV: one row each, planned time in UTC and in the campaign's
 * zone (the API's `local`), actual time, and seconds late (sent ones only).
 */
export function sendsCsv(sends: readonly Send[], zone: string): string {
  const header = ['index', 'email', 'subject', 'state', 'planned_utc', `planned_local (${zone})`, 'sent_utc', 'late_seconds', 'attempt', 'error', 'reason'];
  const rows = sends.map((s) => {
    const t = timingOf(s, 0);
    return [s.index, s.email, s.subject, s.state, s.sendAt, s.local, s.sentAt, t.kind === 'sent' ? t.lateS : null, s.attempt, s.error, s.reason];
  });
  return encodeCsv([header, ...rows]);
}

/** The download's file name: campaign-<id>-sends.csv (the id limited to safe characters). */
export function csvFileName(id: string): string {
  return `campaign-${id.replace(/[^A-Za-z0-9_-]/g, '_')}-sends.csv`;
}
