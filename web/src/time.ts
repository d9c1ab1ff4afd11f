// Conversions between the value of an <input type="datetime-local"> (a wall
// clock time in the browser's timezone, no offset) and the API's RFC 3339 UTC
// instants. The browser's timezone is whatever the Date object uses, so tests
// set TZ to check other zones and DST edges.

const LOCAL_INPUT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?$/;

/**
 * Turns a datetime-local value ("2025-03-30T14:05" or with seconds) into an
 * RFC 3339 UTC string such as "2025-03-30T12:05:00Z". Returns null when the
 * value is empty or not a real calendar date. Fractions of a second are
 * dropped: the API works in whole seconds.
 *
 * Wall times that a DST change skips (a spring-forward gap) or repeats (a
 * fall-back hour) resolve as the ECMAScript Date does: a skipped time uses the
 * offset from before the change (02:30 in a 02:00→03:00 gap is 03:30), and a
 * repeated time means its first occurrence.
 */
export function localInputToUtc(value: string): string | null {
  const m = LOCAL_INPUT.exec(value.trim());
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map((s) => Number(s ?? 0)) as [
    number, number, number, number, number, number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) {
    return null;
  }
  const d = new Date(2000, month - 1, day, hour, minute, second);
  // Set the year separately: new Date(y, ...) maps years 0..99 to 1900..1999.
  d.setFullYear(year, month - 1, day);
  d.setHours(hour, minute, second, 0);
  return toRfc3339Utc(d);
}

/**
 * Turns an RFC 3339 instant into a datetime-local value in the browser's
 * timezone, with seconds ("2025-03-30T14:05:00"). Returns "" for an invalid
 * instant so it can be used directly as an input's value.
 */
export function utcToLocalInput(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return (
    `${pad(d.getFullYear(), 4)}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}` +
    `T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
  );
}

/** Formats a Date as RFC 3339 in UTC with whole seconds: "2025-03-30T12:05:00Z". */
export function toRfc3339Utc(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Describes how long until dueAt, from now (milliseconds since the epoch):
 * "2d 4h left", "3h 05m left", "4m 09s left", "12s left", and "Due now" once
 * the deadline has passed. Seconds round up, so the text reaches "1s left"
 * before "Due now".
 */
export function formatTimeLeft(dueAt: string, now: number): string {
  const due = Date.parse(dueAt);
  if (Number.isNaN(due)) return '';
  const total = Math.ceil((due - now) / 1000);
  if (total <= 0) return 'Due now';
  const days = Math.floor(total / 86400);
  const hours = Math.floor((total % 86400) / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  if (days > 0) return `${days}d ${hours}h left`;
  if (hours > 0) return `${hours}h ${pad(minutes)}m left`;
  if (minutes > 0) return `${minutes}m ${pad(seconds)}s left`;
  return `${seconds}s left`;
}

/** A readable local date and time for display, e.g. "30 Mar 2025, 14:05". */
export function formatLocal(iso: string, locale?: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'medium' }).format(d);
}

function daysInMonth(year: number, month: number): number {
  const d = new Date(Date.UTC(2000, month, 0));
  d.setUTCFullYear(year, month, 0);
  return d.getUTCDate();
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}
