import { type FormEvent, useId, useRef, useState } from 'react';
import { newTaskFromForm, type TaskFormValues } from '../tasks';
import type { NewTask } from '../types';
import { useMounted } from './hooks';
import { TaskFields } from './TaskFields';

const EMPTY: TaskFormValues = { title: '', description: '', due: '' };

interface Props {
  /** Creates the task; a rejection's message is shown in the form. */
  onCreate: (input: NewTask) => Promise<void>;
  errorText: (err: unknown) => string;
}

export function CreateTaskForm({ onCreate, errorText }: Props) {
  const id = useId();
  const mounted = useMounted();
  const titleRef = useRef<HTMLInputElement>(null);
  const dueRef = useRef<HTMLInputElement>(null);
  const [values, setValues] = useState(EMPTY);
  const [error, setError] = useState<{ text: string; field?: keyof TaskFormValues } | null>(null);
  const [busy, setBusy] = useState(false);

  async function onSubmit(e: FormEvent) {
    e.preventDefault();
    if (busy) return;
    const r = newTaskFromForm(values);
    if (!r.ok) {
      setError({ text: r.error, field: r.field });
      (r.field === 'due' ? dueRef : titleRef).current?.focus();
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await onCreate(r.value);
      if (!mounted.current) return;
      setValues(EMPTY);
      titleRef.current?.focus();
    } catch (err) {
      if (mounted.current) setError({ text: errorText(err) });
    } finally {
      if (mounted.current) setBusy(false);
    }
  }

  return (
    <section className="card" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>New task</h2>
      <form onSubmit={onSubmit} noValidate aria-labelledby={`${id}-h`} data-testid="create-task-form">
        <TaskFields
          idPrefix={id}
          values={values}
          onChange={setValues}
          invalid={error?.field}
          errorId={`${id}-err`}
          titleRef={titleRef}
          dueRef={dueRef}
          testIdPrefix="new-task"
        />
        <p id={`${id}-err`} className="error" role="alert" data-testid="create-task-error">
          {error?.text}
        </p>
        <div className="actions">
          <button type="submit" className="primary" aria-busy={busy}>
            Add task
          </button>
        </div>
      </form>
    </section>
  );
}
