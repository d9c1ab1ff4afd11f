import { type FormEvent, type ReactNode, useEffect, useId, useRef, useState } from 'react';
import { dueApiError } from '../duetime';
import { GENERIC_NETWORK_MESSAGE } from '../http';
import { loadPreferred } from '../reminder';
import { newTaskFromForm, type TaskFormValues } from '../tasks';
import type { NewTask } from '../types';
import { useMounted } from './hooks';
import { TaskFields } from './TaskFields';

export const EMPTY_TASK: TaskFormValues = { title: '', description: '', due: '' };

interface Props {
  /** The form's heading, e.g. "New task". */
  heading: string;
  headingLevel?: 2 | 3 | 4;
  submitLabel: string;
  busyLabel: string;
  initial?: TaskFormValues;
  /** Creates the task; a rejection's message is shown in the form. */
  onCreate: (input: NewTask) => Promise<void>;
  errorText: (err: unknown) => string;
  onCancel?: () => void;
  /** Empty the form after a success (the New task form); otherwise keep it. */
  resetOnSuccess?: boolean;
  /** Focus the title when the form appears. */
  autoFocus?: boolean;
  /** Bumped whenever any request succeeds: a "could not reach the server" then goes. */
  successes?: number;
  testIdPrefix: string;
  /** data-testid of the form and of its error line. Default: <testIdPrefix>-form, <testIdPrefix>-error. */
  formTestId?: string;
  errorTestId?: string;
  className?: string;
  children?: ReactNode;
}

/** A form that creates a task: the New task form, and Recreate for an expired task. */
export function TaskForm({
  heading,
  headingLevel = 2,
  submitLabel,
  busyLabel,
  initial = EMPTY_TASK,
  onCreate,
  errorText,
  onCancel,
  resetOnSuccess,
  autoFocus,
  successes = 0,
  testIdPrefix,
  formTestId = `${testIdPrefix}-form`,
  errorTestId = `${testIdPrefix}-error`,
  className = 'card',
  children,
}: Props) {
  const id = useId();
  const mounted = useMounted();
  const titleRef = useRef<HTMLInputElement>(null);
  const dueRef = useRef<HTMLInputElement>(null);
  const [values, setValues] = useState(initial);
  const [error, setError] = useState<{ text: string; field?: keyof TaskFormValues } | null>(null);
  const [busy, setBusy] = useState(false);
  const H = `h${headingLevel}` as const;

  useEffect(() => {
    if (autoFocus) titleRef.current?.focus();
  }, [autoFocus]);

  // A network error is stale once another request got through.
  useEffect(() => {
    setError((e) => (e?.text === GENERIC_NETWORK_MESSAGE ? null : e));
  }, [successes]);

  async function onSubmit(e: FormEvent) {
    e.preventDefault();
    if (busy) return;
    const r = newTaskFromForm(values, Date.now(), loadPreferred());
    if (!r.ok) {
      setError({ text: r.error, field: r.field });
      (r.field === 'due' ? dueRef : titleRef).current?.focus();
      return;
    }
    const sent = values;
    setBusy(true);
    setError(null);
    try {
      await onCreate(r.value);
      if (!mounted.current) return;
      // Text typed while saving is kept: only the values that were sent are cleared.
      if (resetOnSuccess) setValues((v) => (v === sent ? EMPTY_TASK : v));
      titleRef.current?.focus();
    } catch (err) {
      if (!mounted.current) return;
      const due = dueApiError(err, Date.now());
      setError(due ? { text: due, field: 'due' } : { text: errorText(err) });
      if (due) dueRef.current?.focus();
    } finally {
      if (mounted.current) setBusy(false);
    }
  }

  return (
    <section className={className} aria-labelledby={`${id}-h`} data-testid={`${testIdPrefix}-section`}>
      <H id={`${id}-h`} className="form-heading">
        {heading}
      </H>
      {children}
      <form onSubmit={onSubmit} noValidate aria-labelledby={`${id}-h`} data-testid={formTestId}>
        <TaskFields
          idPrefix={id}
          values={values}
          onChange={setValues}
          invalid={error?.field}
          errorId={`${id}-err`}
          titleRef={titleRef}
          dueRef={dueRef}
          testIdPrefix={testIdPrefix}
        />
        <p id={`${id}-err`} className="error" role="alert" data-testid={errorTestId}>
          {error?.text}
        </p>
        <div className="actions">
          <button type="submit" className="primary" disabled={busy} aria-busy={busy}>
            {busy ? busyLabel : submitLabel}
          </button>
          {onCancel ? (
            <button type="button" onClick={onCancel}>
              Cancel
            </button>
          ) : null}
        </div>
      </form>
    </section>
  );
}
