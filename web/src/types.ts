import type { Reminder } from './reminder';

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
  /** The reminder before the deadline (the API's default: 1h). */
  reminder?: Reminder;
  /** When the reminder is due: dueAt minus its offset; absent for none. */
  remindAt?: string;
}

export interface NewTask {
  title: string;
  description?: string;
  dueAt: string;
  reminder?: Reminder;
}

/** The body of PATCH /tasks/{id}: any subset of these fields. */
export interface TaskPatch {
  title?: string;
  description?: string;
  dueAt?: string;
  reminder?: Reminder;
  status?: 'done';
}

export interface TaskPage {
  tasks: Task[];
  cursor?: string;
}

/**
 * What a user's expiry emails are doing (GET/PUT /me/notifications):
 * - off: turned off (in the app, or through an email's unsubscribe link);
 * - pending-confirmation: subscribed, waiting for the click on the link in
 *   the confirmation email; nothing is delivered until then;
 * - confirmed: expiry emails are delivered;
 * - not-subscribed: on, but no subscription exists (not signed in since, or
 *   subscribing failed).
 */
export type NotificationStatus = 'off' | 'pending-confirmation' | 'confirmed' | 'not-subscribed';

export interface NotificationSettings {
  enabled: boolean;
  status: NotificationStatus;
  /** The address the emails go to, when subscribed. */
  email?: string;
  /** The IANA time zone the emails show times in ("Europe/Berlin"); none: UTC. */
  timeZone?: string;
}
