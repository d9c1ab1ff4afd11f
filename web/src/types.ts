export type TaskStatus = 'Pending' | 'Done' | 'Expired';

/** A task as the API returns it. All times are RFC 3339 in UTC. */
export interface Task {
  id: string;
  title: string;
  description?: string;
  status: TaskStatus;
  dueAt: string;
  createdAt: string;
  updatedAt: string;
  completedAt?: string;
  expiredAt?: string;
}

export interface NewTask {
  title: string;
  description?: string;
  dueAt: string;
}

/** The body of PATCH /tasks/{id}: any subset of these fields. */
export interface TaskPatch {
  title?: string;
  description?: string;
  dueAt?: string;
  status?: 'done';
}

export interface TaskPage {
  tasks: Task[];
  cursor?: string;
}
