// Picking a deadline: quick picks, the limits the API accepts, and error
// sentences in the user's local time (never the API's UTC text).
import { ApiError } from './http';
import { localInputToUtc } from './time';

/** How far ahead the API accepts a deadline (internal/task.MaxLeadTime). */
export const MAX_LEAD_MS = 365 * 24 * 3600 * 1000;

/** A datetime-local value with minutes (no seconds) for a Date, in local time. */
export function toLocalMinute(d: Date): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(d.getFullYear(), 4)}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

export interface QuickPick {
  label: string;
  /** The datetime-local value to put in the field. */
  value: string;
}

/**
 * The quick picks for now: in 1 hour, today 18:00 (only while that is at
 * least 15 minutes away), tomorrow 09:00, next week (same time, 7 days on).
 */
export function quickPicks(now: Date): QuickPick[] {
  const inHour = new Date(now.getTime() + 3600_000);
  inHour.setSeconds(0, 0);
  const today18 = new Date(now);
  today18.setHours(18, 0, 0, 0);
  const tomorrow9 = new Date(now);
  tomorrow9.setDate(now.getDate() + 1);
  tomorrow9.setHours(9, 0, 0, 0);
  const week = new Date(now);
  week.setDate(now.getDate() + 7);
  week.setSeconds(0, 0);
  const out: QuickPick[] = [{ label: 'In 1 hour', value: toLocalMinute(inHour) }];
  if (today18.getTime() - now.getTime() >= 15 * 60_000) out.push({ label: 'Today 18:00', value: toLocalMinute(today18) });
  out.push({ label: 'Tomorrow 09:00', value: toLocalMinute(tomorrow9) }, { label: 'Next week', value: toLocalMinute(week) });
  return out;
}

/** The field's min and max: the next minute, and a year ahead. */
export function dueLimits(now: Date): { min: string; max: string } {
  const min = new Date(now.getTime() + 60_000);
  const max = new Date(now.getTime() + MAX_LEAD_MS);
  return { min: toLocalMinute(min), max: toLocalMinute(max) };
}

/** "Mon 30 Nov, 14:05" in the browser's time zone (and locale). */
export function formatShort(ms: number, locale?: string): string {
  return new Intl.DateTimeFormat(locale, { weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' }).format(new Date(ms));
}

/**
 * Checks a datetime-local value against the API's limits, at now. Returns a
 * sentence for a person, in local time, or null when the value is fine.
 */
export function dueError(value: string, now: number, locale?: string): string | null {
  const utc = localInputToUtc(value);
  if (utc === null) return value.trim() === '' ? 'Choose when the task is due.' : 'Enter a valid due date and time.';
  const t = Date.parse(utc);
  if (t <= now) return `Choose a time in the future: it is already ${formatShort(now, locale)}.`;
  if (t > now + MAX_LEAD_MS) return `Choose a time within a year, no later than ${formatShort(now + MAX_LEAD_MS, locale)}.`;
  return null;
}

/**
 * The text to show for an API error about a deadline: the API writes
 * "dueAt 2026-11-30T14:50:27Z is not in the future", which names UTC; the
 * user gets the same meaning in local time. Null for other errors.
 */
export function dueApiError(err: unknown, now: number, locale?: string): string | null {
  if (!(err instanceof ApiError) || err.status !== 400 || !/^dueAt\b/.test(err.message)) return null;
  if (/not in the future/.test(err.message)) return `Choose a time in the future: it is already ${formatShort(now, locale)}.`;
  if (/more than a year/.test(err.message)) return `Choose a time within a year, no later than ${formatShort(now + MAX_LEAD_MS, locale)}.`;
  return 'Enter a valid due date and time.';
}

/** "expired 3 min ago", "expired 2 h ago", "expired 4 days ago", "expired just now". */
export function formatAgo(iso: string, now: number): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return 'expired';
  const s = Math.max(0, Math.floor((now - t) / 1000));
  if (s < 60) return 'expired just now';
  const m = Math.floor(s / 60);
  if (m < 60) return `expired ${m} min ago`;
  const h = Math.floor(m / 60);
  if (h < 24) return `expired ${h} h ago`;
  const d = Math.floor(h / 24);
  return `expired ${d} ${d === 1 ? 'day' : 'days'} ago`;
}

/** A new deadline for a task being recreated: as far from now as it was from its creation, at least 1 h, rounded to the minute. */
export function recreateDue(createdAt: string, dueAt: string, now: number): string {
  const span = Date.parse(dueAt) - Date.parse(createdAt);
  const lead = Number.isFinite(span) && span >= 3600_000 ? Math.min(span, MAX_LEAD_MS - 3600_000) : 3600_000;
  return toLocalMinute(new Date(now + lead));
}
