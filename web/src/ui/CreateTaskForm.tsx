import type { NewTask } from '../types';
import { TaskForm } from './TaskForm';

interface Props {
  /** Creates the task; a rejection's message is shown in the form. */
  onCreate: (input: NewTask) => Promise<void>;
  errorText: (err: unknown) => string;
  /** Focus the title at once (right after sign-in). */
  autoFocus?: boolean;
  successes?: number;
}

export function CreateTaskForm({ onCreate, errorText, autoFocus, successes }: Props) {
  return (
    <TaskForm
      heading="New task"
      submitLabel="Add task"
      busyLabel="Adding…"
      onCreate={onCreate}
      errorText={errorText}
      resetOnSuccess
      {...(autoFocus ? { autoFocus } : {})}
      {...(successes !== undefined ? { successes } : {})}
      testIdPrefix="new-task"
      formTestId="create-task-form"
      errorTestId="create-task-error"
      className="card create"
    />
  );
}
