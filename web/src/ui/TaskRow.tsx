import { type FormEvent, type KeyboardEvent, useEffect, useId, useRef, useState } from 'react';
import { dueApiError, formatAgo, recreateDue, toLocalMinute } from '../duetime';
import { DEFAULT_REMINDER, formatRemindAt } from '../reminder';
import { dueSoon, patchFromForm, type TaskFormValues, tickFor } from '../tasks';
import { formatLocal, formatTimeLeft } from '../time';
import type { NewTask, Task, TaskPatch } from '../types';
import { useMounted, useNow } from './hooks';
import { TaskFields } from './TaskFields';
import { TaskForm } from './TaskForm';

interface Props {
  task: Task;
  onComplete: (t: Task) => void;
  onDelete: (t: Task) => void;
  onSave: (t: Task, patch: TaskPatch) => Promise<void>;
  /** Creates a new task from an expired one; replace also deletes the expired one (Extend). */
  onRecreate: (from: Task, input: NewTask, replace: boolean) => Promise<void>;
  /** Reports what the edit form holds (null when it closes), so a task that expires while edited keeps the typed values. */
  onDraft: (t: Task, values: TaskFormValues | null) => void;
  errorText: (err: unknown) => string;
  /** Shown highlighted (opened from a link). */
  highlighted?: boolean;
}

/** ‘Pay rent’: the task's title as it appears in button names. */
export function quoted(title: string): string {
  return `‘${title}’`;
}

/** The values a Recreate form starts with: the task's title, description and reminder, and a new deadline. */
export function recreateValues(t: Task, now: number): TaskFormValues {
  return { title: t.title, description: t.description ?? '', due: recreateDue(t.createdAt, t.dueAt, now), ...(t.reminder ? { reminder: t.reminder } : {}) };
}

export function TaskRow({ task, onComplete, onDelete, onSave, onRecreate, onDraft, errorText, highlighted }: Props) {
  const id = useId();
  const [editing, setEditing] = useState(false);
  // Extend: a new task that replaces the expired one; Recreate: a new task next to it.
  const [recreating, setRecreating] = useState<false | 'extend' | 'recreate'>(false);
  const editButton = useRef<HTMLButtonElement>(null);
  const recreateButton = useRef<HTMLButtonElement>(null);
  const wasOpen = useRef(false);
  const pending = task.status === 'Pending';
  const expired = task.status === 'Expired';
  // Only rows on screen tick, each as often as its text changes.
  const [tick, setTick] = useState(() => (pending ? tickFor(task.dueAt, Date.now()) : 30_000));
  const now = useNow(pending || expired, tick);
  useEffect(() => {
    if (pending) setTick(tickFor(task.dueAt, now));
  }, [pending, task.dueAt, now]);

  // A task that stops being Pending closes its editor (TaskPage tells the user and keeps the draft).
  useEffect(() => {
    if (!pending && editing) setEditing(false);
  }, [pending, editing]);

  // Give focus back to the button that opened a form when it closes.
  const open = editing || recreating !== false;
  useEffect(() => {
    if (wasOpen.current && !open) (pending ? editButton : recreateButton).current?.focus();
    wasOpen.current = open;
  }, [open, pending]);

  const soon = dueSoon(task, now);
  const name = quoted(task.title);
  const cls = ['task', `task-${task.status.toLowerCase()}`, soon ? 'task-soon' : '', highlighted ? 'task-highlight' : ''].filter(Boolean).join(' ');

  return (
    <li className={cls} data-testid="task-row" data-task-id={task.id} data-status={task.status} data-soon={soon || undefined}>
      <article aria-labelledby={`${id}-title`}>
        <div className="task-head">
          <h3 id={`${id}-title`} className="task-title" data-testid="task-title" tabIndex={-1}>
            {task.title}
          </h3>
          <span className={`status status-${task.status.toLowerCase()}`} data-testid="task-status">
            {expired ? 'Expired' : task.status === 'Done' ? '✓ Done' : soon ? 'Due soon' : 'Pending'}
          </span>
        </div>
        {task.description ? <p className="task-description">{task.description}</p> : null}
        <p className="task-time">
          <TimeLine task={task} now={now} />
        </p>
        {editing ? (
          <EditForm
            task={task}
            onCancel={() => {
              onDraft(task, null);
              setEditing(false);
            }}
            onChange={(v) => onDraft(task, v)}
            onSave={async (patch) => {
              if (patch) await onSave(task, patch);
              onDraft(task, null);
              setEditing(false);
            }}
            errorText={errorText}
          />
        ) : recreating ? (
          <TaskForm
            heading={`${recreating === 'extend' ? 'Extend' : 'Recreate'} ${name}`}
            headingLevel={4}
            submitLabel={recreating === 'extend' ? 'Extend' : 'Recreate'}
            busyLabel={recreating === 'extend' ? 'Extending…' : 'Recreating…'}
            initial={recreateValues(task, Date.now())}
            onCreate={async (input) => {
              await onRecreate(task, input, recreating === 'extend');
              setRecreating(false);
            }}
            onCancel={() => setRecreating(false)}
            errorText={errorText}
            autoFocus
            testIdPrefix="recreate-task"
            className="edit"
          />
        ) : (
          <div className="actions">
            {pending ? (
              <>
                <button type="button" className="primary" onClick={() => onComplete(task)} aria-label={`Complete ${name}`}>
                  Complete
                </button>
                <button type="button" ref={editButton} onClick={() => setEditing(true)} aria-label={`Edit ${name}`}>
                  Edit
                </button>
              </>
            ) : null}
            {expired ? (
              <>
                <button type="button" className="primary" ref={recreateButton} onClick={() => setRecreating('extend')} aria-label={`Extend ${name}`}>
                  Extend
                </button>
                <button type="button" onClick={() => setRecreating('recreate')} aria-label={`Recreate ${name}`}>
                  Recreate
                </button>
              </>
            ) : null}
            <button type="button" className="danger" onClick={() => onDelete(task)} aria-label={`Delete ${name}`}>
              Delete
            </button>
          </div>
        )}
      </article>
    </li>
  );
}

function TimeLine({ task, now }: { task: Task; now: number }) {
  const due = <time dateTime={task.dueAt}>{formatLocal(task.dueAt)}</time>;
  if (task.status === 'Pending') {
    return (
      <>
        <span className="time-left" data-testid="task-time-left">
          {formatTimeLeft(task.dueAt, now)}
        </span>{' '}
        · <span className="due-at">due {due}</span>
        {task.remindAt ? (
          <>
            {' '}
            ·{' '}
            <span className="reminder" data-testid="task-reminder">
              Reminder <time dateTime={task.remindAt}>{formatRemindAt(task.remindAt, now)}</time>
            </span>
          </>
        ) : null}
      </>
    );
  }
  if (task.status === 'Done') {
    return task.completedAt ? (
      <>
        Completed <time dateTime={task.completedAt}>{formatLocal(task.completedAt)}</time> · was due {due}
      </>
    ) : (
      <>Completed · was due {due}</>
    );
  }
  const at = task.expiredAt ?? task.dueAt;
  return (
    <>
      <span className="expired-ago" data-testid="task-expired-ago">
        {formatAgo(at, now)}
      </span>{' '}
      · was due <time dateTime={at}>{formatLocal(at)}</time>
    </>
  );
}

interface EditProps {
  task: Task;
  onCancel: () => void;
  onChange: (v: TaskFormValues) => void;
  onSave: (patch: TaskPatch | null) => Promise<void>;
  errorText: (err: unknown) => string;
}

function EditForm({ task, onCancel, onChange, onSave, errorText }: EditProps) {
  const id = useId();
  const mounted = useMounted();
  const titleRef = useRef<HTMLInputElement>(null);
  const dueRef = useRef<HTMLInputElement>(null);
  const [initial] = useState<TaskFormValues>(() => ({
    title: task.title,
    description: task.description ?? '',
    due: toLocalMinute(new Date(task.dueAt)),
    reminder: task.reminder ?? DEFAULT_REMINDER,
  }));
  const [values, setValues] = useState(initial);
  const [error, setError] = useState<{ text: string; field?: keyof TaskFormValues } | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    titleRef.current?.focus();
  }, []);

  function change(v: TaskFormValues) {
    setValues(v);
    onChange(v);
  }

  async function onSubmit(e: FormEvent) {
    e.preventDefault();
    if (busy) return;
    const r = patchFromForm(task, values);
    if (!r.ok) {
      setError({ text: r.error, field: r.field });
      (r.field === 'due' ? dueRef : titleRef).current?.focus();
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await onSave(r.value);
    } catch (err) {
      if (!mounted.current) return;
      const due = dueApiError(err, Date.now());
      setError(due ? { text: due, field: 'due' } : { text: errorText(err) });
    } finally {
      if (mounted.current) setBusy(false);
    }
  }

  function onKeyDown(e: KeyboardEvent) {
    if (e.key === 'Escape') {
      e.preventDefault();
      onCancel();
    }
  }

  return (
    <form className="edit" onSubmit={onSubmit} onKeyDown={onKeyDown} noValidate aria-label={`Edit ${quoted(task.title)}`} data-testid="edit-task-form">
      <TaskFields
        idPrefix={id}
        values={values}
        onChange={change}
        invalid={error?.field}
        errorId={`${id}-err`}
        titleRef={titleRef}
        dueRef={dueRef}
        testIdPrefix="edit-task"
        // A reminder already sent or skipped is not news: say it is past only once the deadline or the reminder changes.
        reminderNote={values.due !== initial.due || values.reminder !== initial.reminder}
      />
      <p id={`${id}-err`} className="error" role="alert" data-testid="edit-task-error">
        {error?.text}
      </p>
      <div className="actions">
        <button type="submit" className="primary" disabled={busy} aria-busy={busy}>
          {busy ? 'Saving…' : 'Save'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
