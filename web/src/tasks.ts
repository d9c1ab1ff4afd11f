// Decisions about the task list that do not need React: when to poll, what
// changed between two loads, how a form becomes a request body.
import { dueError } from './duetime';
import { DEFAULT_REMINDER, type Reminder, reminderField } from './reminder';
import { localInputToUtc } from './time';
import type { NewTask, Task, TaskPatch } from './types';

/** How often the list is reloaded while a Pending task is past its deadline (it expires any moment). */
export const POLL_INTERVAL_MS = 3000;
/** The longest wait between reloads while any task is Pending (changes made in another tab or device). */
export const IDLE_POLL_MS = 60_000;

/**
 * How long to wait before reloading the list, or null to stop polling. Only a
 * Pending task changes on its own (it expires at its deadline), so the list is
 * reloaded just after the next deadline, every intervalMs while a deadline has
 * passed but the task is not Expired yet, and at most idleMs apart otherwise.
 * The caller polls only while the tab is visible.
 */
export function pollDelay(tasks: readonly Task[], now: number, intervalMs = POLL_INTERVAL_MS, idleMs = IDLE_POLL_MS): number | null {
  let next = Infinity;
  for (const t of tasks) if (t.status === 'Pending') next = Math.min(next, Date.parse(t.dueAt));
  if (next === Infinity) return null;
  const wait = next - now;
  if (wait <= 0) return intervalMs;
  return Math.min(wait + 500, idleMs);
}

/** The list's tabs. */
export type TaskTab = 'Pending' | 'Done' | 'Expired';
export const TABS: readonly TaskTab[] = ['Pending', 'Done', 'Expired'];

/** How many tasks each tab holds. */
export function tabCounts(tasks: readonly Task[]): Record<TaskTab, number> {
  const c: Record<TaskTab, number> = { Pending: 0, Done: 0, Expired: 0 };
  for (const t of tasks) c[t.status]++;
  return c;
}

/** The tasks of one tab whose title contains the query (case- and accent-insensitive), sorted. */
export function filterTasks(tasks: readonly Task[], tab: TaskTab, query: string): Task[] {
  const q = fold(query.trim());
  return sortTasks(tasks.filter((t) => t.status === tab && (q === '' || fold(t.title).includes(q))));
}

function fold(s: string): string {
  return s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

/** How often a countdown needs to change: every second in the last hour, else every 30 s. */
export function tickFor(dueAt: string, now: number): number {
  return Date.parse(dueAt) - now <= 3600_000 ? 1000 : 30_000;
}

/** True when a Pending task is due within the hour (it is highlighted). */
export function dueSoon(t: Task, now: number): boolean {
  const left = Date.parse(t.dueAt) - now;
  return t.status === 'Pending' && left > 0 && left <= 3600_000;
}

/** Pending tasks first, soonest deadline first; then the rest, latest deadline first. */
export function sortTasks(tasks: readonly Task[]): Task[] {
  return [...tasks].sort((a, b) => {
    const ap = a.status === 'Pending' ? 0 : 1;
    const bp = b.status === 'Pending' ? 0 : 1;
    if (ap !== bp) return ap - bp;
    const byDue = Date.parse(a.dueAt) - Date.parse(b.dueAt);
    return (ap === 0 ? byDue : -byDue) || a.id.localeCompare(b.id);
  });
}

/**
 * Sentences for a screen reader about tasks whose status changed between two
 * loads of the list, e.g. 'Task "Pay rent" expired.'. Tasks that appeared or
 * disappeared are not announced here: the user's own actions announce those.
 */
export function statusChanges(before: readonly Task[], after: readonly Task[]): string[] {
  const old = new Map(before.map((t) => [t.id, t.status]));
  const out: string[] = [];
  for (const t of after) {
    const was = old.get(t.id);
    if (was === undefined || was === t.status) continue;
    if (t.status === 'Expired') out.push(`Task "${t.title}" expired.`);
    else if (t.status === 'Done') out.push(`Task "${t.title}" is done.`);
    else out.push(`Task "${t.title}" is ${t.status}.`);
  }
  return out;
}

/** What the create and edit forms hold: raw input values. */
export interface TaskFormValues {
  title: string;
  description: string;
  /** The value of the datetime-local input, in the browser's timezone. */
  due: string;
  /** The reminder the user chose in this form; absent or null: not chosen, the default applies (src/reminder.ts). */
  reminder?: Reminder | null;
}

export type FormResult<T> = { ok: true; value: T } | { ok: false; error: string; field: keyof TaskFormValues };

function checkCommon(v: TaskFormValues, now: number): FormResult<{ title: string; dueAt: string }> {
  const title = v.title.trim();
  if (title === '') return { ok: false, error: 'Enter a title.', field: 'title' };
  const err = dueError(v.due, now);
  const dueAt = localInputToUtc(v.due);
  if (err !== null || dueAt === null) return { ok: false, error: err ?? 'Enter a valid due date and time.', field: 'due' };
  return { ok: true, value: { title, dueAt } };
}

/**
 * The body of POST /tasks for the create form. Length limits are the
 * server's to enforce. The reminder is the one chosen, or else the user's
 * preferred one (or the largest still in the future when that is past).
 */
export function newTaskFromForm(v: TaskFormValues, now = Date.now(), preferred: Reminder = DEFAULT_REMINDER): FormResult<NewTask> {
  const c = checkCommon(v, now);
  if (!c.ok) return c;
  const description = v.description.trim();
  const reminder = reminderField(v.reminder, preferred, v.due, now).value;
  return { ok: true, value: { ...c.value, ...(description ? { description } : {}), reminder } };
}

/**
 * The body of PATCH /tasks/{id} for the edit form: only the fields that
 * changed (the reminder when one was chosen that differs from the task's),
 * or null when nothing did. The deadline counts as changed only when
 * it names a different minute (or second, when seconds were typed), so opening and saving the form untouched sends
 * nothing.
 */
export function patchFromForm(task: Task, v: TaskFormValues, now = Date.now()): FormResult<TaskPatch | null> {
  const c = checkCommon(v, now);
  if (!c.ok) return c;
  const patch: TaskPatch = {};
  if (c.value.title !== task.title) patch.title = c.value.title;
  const description = v.description.trim();
  if (description !== (task.description ?? '')) patch.description = description;
  // The field shows minutes: a deadline counts as unchanged while it names the
  // same minute, or the same second when seconds were typed.
  const unit = /T\d\d:\d\d:\d\d/.test(v.due) ? 1000 : 60_000;
  if (Math.floor(Date.parse(c.value.dueAt) / unit) !== Math.floor(Date.parse(task.dueAt) / unit)) patch.dueAt = c.value.dueAt;
  if (v.reminder != null && v.reminder !== (task.reminder ?? DEFAULT_REMINDER)) patch.reminder = v.reminder;
  return { ok: true, value: Object.keys(patch).length ? patch : null };
}
