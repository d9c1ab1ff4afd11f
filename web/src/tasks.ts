// Decisions about the task list that do not need React: when to poll, what
// changed between two loads, how a form becomes a request body.
import { localInputToUtc } from './time';
import type { NewTask, Task, TaskPatch } from './types';

export const POLL_INTERVAL_MS = 3000;

/**
 * How long to wait before reloading the list, or null to stop polling. The
 * list is polled only while a task is Pending, because only a Pending task can
 * change on its own (it expires at its deadline).
 */
export function pollDelay(tasks: readonly Task[], intervalMs = POLL_INTERVAL_MS): number | null {
  return tasks.some((t) => t.status === 'Pending') ? intervalMs : null;
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
}

export type FormResult<T> = { ok: true; value: T } | { ok: false; error: string; field: keyof TaskFormValues };

function checkCommon(v: TaskFormValues): FormResult<{ title: string; dueAt: string }> {
  const title = v.title.trim();
  if (title === '') return { ok: false, error: 'Enter a title.', field: 'title' };
  const dueAt = localInputToUtc(v.due);
  if (dueAt === null) return { ok: false, error: 'Enter a valid due date and time.', field: 'due' };
  return { ok: true, value: { title, dueAt } };
}

/** The body of POST /tasks for the create form. Length limits are the server's to enforce. */
export function newTaskFromForm(v: TaskFormValues): FormResult<NewTask> {
  const c = checkCommon(v);
  if (!c.ok) return c;
  const description = v.description.trim();
  return { ok: true, value: { ...c.value, ...(description ? { description } : {}) } };
}

/**
 * The body of PATCH /tasks/{id} for the edit form: only the fields that
 * changed, or null when nothing did. The deadline counts as changed only when
 * it names a different second, so opening and saving the form untouched sends
 * nothing.
 */
export function patchFromForm(task: Task, v: TaskFormValues): FormResult<TaskPatch | null> {
  const c = checkCommon(v);
  if (!c.ok) return c;
  const patch: TaskPatch = {};
  if (c.value.title !== task.title) patch.title = c.value.title;
  const description = v.description.trim();
  if (description !== (task.description ?? '')) patch.description = description;
  if (Date.parse(c.value.dueAt) !== Math.floor(Date.parse(task.dueAt) / 1000) * 1000) patch.dueAt = c.value.dueAt;
  return { ok: true, value: Object.keys(patch).length ? patch : null };
}
