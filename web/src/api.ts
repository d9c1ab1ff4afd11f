import { type FetchFn, joinUrl, requestJson, UserFacingError } from './http';
import type { NewTask, NotificationSettings, Task, TaskPage, TaskPatch } from './types';

/** Returns the current id token, or throws when nobody is signed in. */
export type TokenSource = () => Promise<string>;

export interface TaskApi {
  listTasks(cursor?: string, limit?: number): Promise<TaskPage>;
  listAllTasks(): Promise<Task[]>;
  getTask(id: string): Promise<Task>;
  createTask(input: NewTask): Promise<Task>;
  updateTask(id: string, patch: TaskPatch, opts?: SendOptions): Promise<Task>;
  deleteTask(id: string, opts?: SendOptions): Promise<void>;
}

export interface SendOptions {
  /** Let the request outlive the page (sent while the page is closing). */
  keepalive?: boolean;
}

/** The caller's notification setting. */
export interface NotificationsApi {
  getNotifications(): Promise<NotificationSettings>;
  /**
   * Off deletes the subscription; on subscribes again (a new confirmation
   * email). timeZone, when given, is saved with it.
   */
  setNotifications(enabled: boolean, timeZone?: string): Promise<NotificationSettings>;
  /** Saves the IANA time zone the emails show times in; the subscription is left as it is. */
  setTimeZone(timeZone: string): Promise<NotificationSettings>;
}

export interface TaskApiOptions {
  /** The API's base URL, e.g. "https://abc.execute-api.eu-west-1.amazonaws.com/prod". */
  apiUrl: string;
  getToken: TokenSource;
  fetchFn?: FetchFn;
  /** Page size asked for when listing all tasks. Default: the server's default. */
  pageSize?: number;
  /** A guard against a server that never stops returning cursors. Default: 1000 pages. */
  maxPages?: number;
}

export function createTaskApi(opts: TaskApiOptions): TaskApi & NotificationsApi {
  const fetchFn = opts.fetchFn ?? ((input, init) => fetch(input, init));
  const maxPages = opts.maxPages ?? 1000;

  async function call<T>(method: string, path: string, body?: unknown, send?: SendOptions): Promise<T> {
    const token = await opts.getToken();
    const headers: Record<string, string> = { Authorization: token, Accept: 'application/json' };
    const init: RequestInit = { method, headers, ...(send?.keepalive ? { keepalive: true } : {}) };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    return requestJson<T>(fetchFn, joinUrl(opts.apiUrl, path), init);
  }

  async function listTasks(cursor?: string, limit?: number): Promise<TaskPage> {
    const q = new URLSearchParams();
    if (cursor !== undefined) q.set('cursor', cursor);
    if (limit !== undefined) q.set('limit', String(limit));
    const qs = q.toString();
    const page = await call<TaskPage | undefined>('GET', `/tasks${qs ? `?${qs}` : ''}`);
    return { tasks: page?.tasks ?? [], ...(page?.cursor ? { cursor: page.cursor } : {}) };
  }

  return {
    listTasks,

    async listAllTasks() {
      const all: Task[] = [];
      const seen = new Set<string>();
      let cursor: string | undefined;
      for (let pages = 0; pages < maxPages; pages++) {
        const page = await listTasks(cursor, opts.pageSize);
        all.push(...page.tasks);
        if (!page.cursor) return all;
        if (seen.has(page.cursor)) break;
        seen.add(page.cursor);
        cursor = page.cursor;
      }
      throw new UserFacingError('The task list could not be loaded completely. Please reload the page.');
    },

    getTask: (id) => call<Task>('GET', `/tasks/${encodeURIComponent(id)}`),
    createTask: (input) => call<Task>('POST', '/tasks', input),
    updateTask: (id, patch, send) => call<Task>('PATCH', `/tasks/${encodeURIComponent(id)}`, patch, send),
    async deleteTask(id, send) {
      await call<void>('DELETE', `/tasks/${encodeURIComponent(id)}`, undefined, send);
    },

    getNotifications: () => call<NotificationSettings>('GET', '/me/notifications'),
    setNotifications: (enabled, timeZone) =>
      call<NotificationSettings>('PUT', '/me/notifications', timeZone === undefined ? { enabled } : { enabled, timeZone }),
    setTimeZone: (timeZone) => call<NotificationSettings>('PUT', '/me/notifications', { timeZone }),
  };
}
