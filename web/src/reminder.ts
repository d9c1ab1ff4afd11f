// The reminder before a task's deadline: the choices, the user's default
// (their last choice, kept in localStorage), what happens when the chosen
// time is already past, and how a reminder time is shown. The API contract:
// a task's "reminder" is one of none, 15m, 1h, 1d (default 1h), and
// "remindAt" (RFC 3339 UTC) is dueAt minus the offset, present unless none.
// A reminder whose time has already passed when written is stored but never
// sent.
import { formatShort } from './duetime';
import { localInputToUtc } from './time';

export type Reminder = 'none' | '15m' | '1h' | '1d';

export interface ReminderOption {
  value: Reminder;
  /** The option's text, e.g. "1 hour before". */
  label: string;
  /** How long before the deadline; 0 for none. */
  offsetMs: number;
}

/** The choices, in the order the field lists them. */
export const REMINDERS: readonly ReminderOption[] = [
  { value: 'none', label: 'None', offsetMs: 0 },
  { value: '15m', label: '15 minutes before', offsetMs: 15 * 60_000 },
  { value: '1h', label: '1 hour before', offsetMs: 3600_000 },
  { value: '1d', label: '1 day before', offsetMs: 24 * 3600_000 },
];

/** The default of a user who never chose (the API's default too). */
export const DEFAULT_REMINDER: Reminder = '1h';

/** Where the user's last choice is kept. */
export const REMINDER_STORAGE_KEY = 'unschedule.reminder';

export function isReminder(v: unknown): v is Reminder {
  return REMINDERS.some((o) => o.value === v);
}

function option(r: Reminder): ReminderOption {
  return REMINDERS.find((o) => o.value === r) ?? REMINDERS[0]!;
}

export function reminderLabel(r: Reminder): string {
  return option(r).label;
}

/** The reminder time for a deadline (milliseconds), or null for none. */
export function remindAtMs(dueMs: number, r: Reminder): number | null {
  return r === 'none' ? null : dueMs - option(r).offsetMs;
}

/** True when the reminder's time is not after now: it would never be sent. */
export function reminderPast(dueMs: number, r: Reminder, now: number): boolean {
  const at = remindAtMs(dueMs, r);
  return at !== null && at <= now;
}

/** The largest reminder whose time is still in the future for this deadline, or none. */
export function largestFuture(dueMs: number, now: number): Reminder {
  let best: Reminder = 'none';
  for (const o of REMINDERS) if (o.value !== 'none' && !reminderPast(dueMs, o.value, now)) best = o.value;
  return best;
}

/**
 * The default for a deadline: the user's preferred reminder, or, when its
 * time is already past, the largest one still in the future (none when even
 * 15 minutes before is past).
 */
export function defaultFor(preferred: Reminder, dueMs: number, now: number): Reminder {
  return reminderPast(dueMs, preferred, now) ? largestFuture(dueMs, now) : preferred;
}

/** The small part of the Storage interface this module uses. */
export type PrefStorage = Pick<Storage, 'getItem' | 'setItem'>;

function browserStorage(): PrefStorage | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage;
  } catch {
    return null; // storage blocked (privacy settings): no memory
  }
}

/** The user's last choice, or the default when there is none (or storage is unavailable). */
export function loadPreferred(storage: PrefStorage | null = browserStorage()): Reminder {
  try {
    const v = storage?.getItem(REMINDER_STORAGE_KEY);
    return isReminder(v) ? v : DEFAULT_REMINDER;
  } catch {
    return DEFAULT_REMINDER;
  }
}

/** Remembers a choice the user made as their default for new tasks. */
export function savePreferred(r: Reminder, storage: PrefStorage | null = browserStorage()): void {
  try {
    storage?.setItem(REMINDER_STORAGE_KEY, r);
  } catch {
    // full or blocked storage: the choice is not remembered
  }
}

/** What the reminder field shows for the values of a form. */
export interface ReminderField {
  /** The selected option, and what the request sends. */
  value: Reminder;
  /** A sentence next to the field, or null. */
  note: string | null;
  /** A reminder still in the future to offer instead of a past one the user chose, or null. */
  offer: Reminder | null;
}

/**
 * The reminder field for a form: chosen is the user's explicit choice in this
 * form (null or undefined: none yet, the default applies), due the Due
 * field's datetime-local value. An untouched field takes defaultFor(); a
 * chosen reminder whose time is past stays chosen, is flagged, and the
 * largest option still in the future is offered.
 */
export function reminderField(chosen: Reminder | null | undefined, preferred: Reminder, due: string, now: number): ReminderField {
  const utc = localInputToUtc(due);
  const dueMs = utc === null ? NaN : Date.parse(utc);
  if (!Number.isFinite(dueMs) || dueMs <= now) return { value: chosen ?? preferred, note: null, offer: null };
  if (chosen == null) {
    const value = defaultFor(preferred, dueMs, now);
    if (value === preferred) return { value, note: null, offer: null };
    const note =
      value === 'none'
        ? `${reminderLabel(preferred)} is already past — no reminder will be sent.`
        : `${reminderLabel(preferred)} is already past, so ${reminderLabel(value)} is chosen.`;
    return { value, note, offer: null };
  }
  if (!reminderPast(dueMs, chosen, now)) return { value: chosen, note: null, offer: null };
  const offer = largestFuture(dueMs, now);
  return { value: chosen, note: `${reminderLabel(chosen)} is already past — no reminder will be sent.`, offer: offer === 'none' ? null : offer };
}

/**
 * A reminder time for display, in the browser's time zone: "16:55" on the
 * day of now, otherwise with the day ("Tue 1 Dec, 16:55"). Returns "" for an
 * invalid instant.
 */
export function formatRemindAt(iso: string, now: number, locale?: string): string {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '';
  const a = new Date(t);
  const b = new Date(now);
  const sameDay = a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();
  if (!sameDay) return formatShort(t, locale);
  return new Intl.DateTimeFormat(locale, { hour: '2-digit', minute: '2-digit' }).format(a);
}
