import { type FormEvent, type KeyboardEvent, useEffect, useId, useRef, useState } from 'react';
import { patchFromForm, type TaskFormValues } from '../tasks';
import { formatLocal, formatTimeLeft, utcToLocalInput } from '../time';
import type { Task, TaskPatch } from '../types';
import { useMounted } from './hooks';
import { TaskFields } from './TaskFields';

interface Props {
  task: Task;
  now: number;
  onComplete: (t: Task) => Promise<void>;
  onDelete: (t: Task) => Promise<void>;
  onSave: (t: Task, patch: TaskPatch) => Promise<void>;
  errorText: (err: unknown) => string;
}

export function TaskRow({ task, now, onComplete, onDelete, onSave, errorText }: Props) {
  const id = useId();
  const [editing, setEditing] = useState(false);
  const [busy, setBusy] = useState(false);
  const editButton = useRef<HTMLButtonElement>(null);
  const mounted = useMounted();
  const wasEditing = useRef(false);
  const pending = task.status === 'Pending';

  // Give focus back to the Edit button when the editor closes.
  useEffect(() => {
    if (wasEditing.current && !editing) editButton.current?.focus();
    wasEditing.current = editing;
  }, [editing]);

  async function act(fn: () => Promise<void>) {
    if (busy) return;
    setBusy(true);
    try {
      await fn();
    } finally {
      if (mounted.current) setBusy(false);
    }
  }

  return (
    <li className={`task task-${task.status.toLowerCase()}`} data-testid="task-row" data-task-id={task.id} data-status={task.status}>
      <article aria-labelledby={`${id}-title`}>
        <div className="task-head">
          <h3 id={`${id}-title`} className="task-title" data-testid="task-title">
            {task.title}
          </h3>
          <span className={`status status-${task.status.toLowerCase()}`} data-testid="task-status">
            {task.status}
          </span>
        </div>
        {task.description ? <p className="task-description">{task.description}</p> : null}
        <p className="task-time">
          <TimeLine task={task} now={now} />
        </p>
        {editing ? (
          <EditForm
            task={task}
            onCancel={() => setEditing(false)}
            onSave={async (patch) => {
              if (patch) await onSave(task, patch);
              if (mounted.current) setEditing(false);
            }}
            errorText={errorText}
          />
        ) : (
          <div className="actions">
            {pending ? (
              <>
                <button type="button" className="primary" onClick={() => void act(() => onComplete(task))} aria-busy={busy} aria-describedby={`${id}-title`}>
                  Complete
                </button>
                <button type="button" ref={editButton} onClick={() => setEditing(true)} aria-describedby={`${id}-title`}>
                  Edit
                </button>
              </>
            ) : null}
            <button type="button" className="danger" onClick={() => void act(() => onDelete(task))} aria-busy={busy} aria-describedby={`${id}-title`}>
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
        · due {due}
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
      Expired <time dateTime={at}>{formatLocal(at)}</time>
    </>
  );
}

interface EditProps {
  task: Task;
  onCancel: () => void;
  onSave: (patch: TaskPatch | null) => Promise<void>;
  errorText: (err: unknown) => string;
}

function EditForm({ task, onCancel, onSave, errorText }: EditProps) {
  const id = useId();
  const mounted = useMounted();
  const titleRef = useRef<HTMLInputElement>(null);
  const dueRef = useRef<HTMLInputElement>(null);
  const [values, setValues] = useState<TaskFormValues>(() => ({
    title: task.title,
    description: task.description ?? '',
    due: utcToLocalInput(task.dueAt),
  }));
  const [error, setError] = useState<{ text: string; field?: keyof TaskFormValues } | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    titleRef.current?.focus();
  }, []);

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
      if (mounted.current) setError({ text: errorText(err) });
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
    <form className="edit" onSubmit={onSubmit} onKeyDown={onKeyDown} noValidate aria-label="Edit task" data-testid="edit-task-form">
      <TaskFields
        idPrefix={id}
        values={values}
        onChange={setValues}
        invalid={error?.field}
        errorId={`${id}-err`}
        titleRef={titleRef}
        dueRef={dueRef}
        testIdPrefix="edit-task"
      />
      <p id={`${id}-err`} className="error" role="alert" data-testid="edit-task-error">
        {error?.text}
      </p>
      <div className="actions">
        <button type="submit" className="primary" aria-busy={busy}>
          Save
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
