import type { RefObject } from 'react';
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
}

/** Title, Description and Due inputs, shared by the create and edit forms. */
export function TaskFields({ idPrefix, values, onChange, invalid, errorId, titleRef, dueRef, testIdPrefix }: Props) {
  const described = (f: keyof TaskFormValues) => (invalid === f ? errorId : undefined);
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
          step={1}
          required
          value={values.due}
          onChange={(e) => onChange({ ...values, due: e.target.value })}
          aria-invalid={invalid === 'due' || undefined}
          aria-describedby={[`${idPrefix}-due-hint`, described('due')].filter(Boolean).join(' ')}
          data-testid={`${testIdPrefix}-due`}
        />
        <small id={`${idPrefix}-due-hint`} className="hint">
          In your timezone ({Intl.DateTimeFormat().resolvedOptions().timeZone}).
        </small>
      </div>
    </>
  );
}
