import type { RefObject } from 'react';
import { dueLimits, quickPicks } from '../duetime';
import type { TaskFormValues } from '../tasks';

interface Props {
  idPrefix: string;
  values: TaskFormValues;
  onChange: (v: TaskFormValues) => void;
  /** The field the current error is about; it gets aria-invalid. */
  invalid?: keyof TaskFormValues | undefined;
  errorId: string;
  titleRef?: RefObject<HTMLInputElement | null>;
  dueRef?: RefObject<HTMLInputElement | null>;
  testIdPrefix: string;
  /** Now, for the quick picks and the field's limits. Default: Date.now() at render. */
  now?: number;
}

/** Title, Description and Due inputs (with quick picks), shared by the task forms. */
export function TaskFields({ idPrefix, values, onChange, invalid, errorId, titleRef, dueRef, testIdPrefix, now = Date.now() }: Props) {
  const described = (f: keyof TaskFormValues) => (invalid === f ? errorId : undefined);
  const limits = dueLimits(new Date(now));
  return (
    <>
      <div className="field">
        <label htmlFor={`${idPrefix}-title`}>Title</label>
        <input
          id={`${idPrefix}-title`}
          ref={titleRef}
          name="title"
          type="text"
          required
          maxLength={200}
          autoComplete="off"
          value={values.title}
          onChange={(e) => onChange({ ...values, title: e.target.value })}
          aria-invalid={invalid === 'title' || undefined}
          aria-describedby={described('title')}
          data-testid={`${testIdPrefix}-title`}
        />
      </div>
      <div className="field">
        <label htmlFor={`${idPrefix}-description`}>Description</label>
        <textarea
          id={`${idPrefix}-description`}
          name="description"
          rows={2}
          maxLength={2000}
          value={values.description}
          onChange={(e) => onChange({ ...values, description: e.target.value })}
          data-testid={`${testIdPrefix}-description`}
        />
      </div>
      <div className="field">
        <label htmlFor={`${idPrefix}-due`}>Due</label>
        <input
          id={`${idPrefix}-due`}
          ref={dueRef}
          name="due"
          type="datetime-local"
          required
          min={limits.min}
          max={limits.max}
          value={values.due}
          onChange={(e) => onChange({ ...values, due: e.target.value })}
          aria-invalid={invalid === 'due' || undefined}
          aria-describedby={[`${idPrefix}-due-hint`, described('due')].filter(Boolean).join(' ')}
          data-testid={`${testIdPrefix}-due`}
        />
        <small id={`${idPrefix}-due-hint`} className="hint">
          In your time zone ({Intl.DateTimeFormat().resolvedOptions().timeZone}), within a year.
        </small>
        <div className="picks" role="group" aria-label="Quick picks">
          {quickPicks(new Date(now)).map((p) => (
            <button
              key={p.label}
              type="button"
              className="pick"
              aria-pressed={values.due === p.value}
              onClick={() => onChange({ ...values, due: p.value })}
            >
              {p.label}
            </button>
          ))}
        </div>
      </div>
    </>
  );
}
