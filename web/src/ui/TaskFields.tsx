import { type RefObject, useRef } from 'react';
import { dueLimits, quickPicks } from '../duetime';
import { isReminder, loadPreferred, type Reminder, REMINDERS, reminderField, reminderLabel, savePreferred } from '../reminder';
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
  /** The reminder an untouched field starts from. Default: the user's last choice (loadPreferred()). */
  preferred?: Reminder;
  /** Say next to the reminder when its time is already past. Default: true. */
  reminderNote?: boolean;
}

/** Title, Description, Due (with quick picks) and Reminder inputs, shared by the task forms. */
export function TaskFields({
  idPrefix,
  values,
  onChange,
  invalid,
  errorId,
  titleRef,
  dueRef,
  testIdPrefix,
  now = Date.now(),
  preferred = loadPreferred(),
  reminderNote = true,
}: Props) {
  const described = (f: keyof TaskFormValues) => (invalid === f ? errorId : undefined);
  const limits = dueLimits(new Date(now));
  const reminder = reminderField(values.reminder, preferred, values.due, now);
  const note = reminderNote ? reminder.note : null;
  const reminderRef = useRef<HTMLSelectElement>(null);
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
      <div className="field field-reminder">
        <label htmlFor={`${idPrefix}-reminder`}>Reminder</label>
        <select
          id={`${idPrefix}-reminder`}
          ref={reminderRef}
          name="reminder"
          value={reminder.value}
          onChange={(e) => {
            if (!isReminder(e.target.value)) return;
            savePreferred(e.target.value); // the user's last choice is their default
            onChange({ ...values, reminder: e.target.value });
          }}
          aria-describedby={`${idPrefix}-reminder-note`}
          data-testid={`${testIdPrefix}-reminder`}
        >
          {REMINDERS.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
        <small id={`${idPrefix}-reminder-note`} className="hint reminder-note" role="status" data-testid={`${testIdPrefix}-reminder-note`}>
          {note}
        </small>
        {note && reminder.offer ? (
          <div className="picks">
            <button
              type="button"
              className="pick"
              onClick={() => {
                onChange({ ...values, reminder: reminder.offer });
                reminderRef.current?.focus(); // this button goes away
              }}
              data-testid={`${testIdPrefix}-reminder-offer`}
            >
              Use {reminderLabel(reminder.offer)}
            </button>
          </div>
        ) : null}
      </div>
    </>
  );
}
