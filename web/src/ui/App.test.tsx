// @vitest-environment jsdom
import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TaskApi } from '../api';
import type { Auth, Session } from '../auth';
import { ApiError } from '../http';
import type { NewTask, Task, TaskPatch } from '../types';
import { App } from './App';

const originalTZ = process.env.TZ;
beforeAll(() => {
  process.env.TZ = 'Europe/Berlin';
});
afterAll(() => {
  if (originalTZ === undefined) delete process.env.TZ;
  else process.env.TZ = originalTZ;
});
afterEach(cleanup);

/** An in-memory backend behind the TaskApi interface, with a log of calls. */
class FakeApi implements TaskApi {
  tasks = new Map<string, Task>();
  calls: string[] = [];
  nextError: ApiError | null = null;
  private seq = 0;

  private fail() {
    const e = this.nextError;
    this.nextError = null;
    if (e) throw e;
  }
  add(t: Partial<Task> & { title: string; dueAt: string }): Task {
    const id = `t${++this.seq}`;
    const task: Task = { id, status: 'Pending', createdAt: '2025-01-01T00:00:00Z', updatedAt: '2025-01-01T00:00:00Z', ...t };
    this.tasks.set(id, task);
    return task;
  }
  set(id: string, patch: Partial<Task>) {
    this.tasks.set(id, { ...this.tasks.get(id)!, ...patch });
  }
  async listTasks() {
    return { tasks: await this.listAllTasks() };
  }
  async listAllTasks() {
    this.calls.push('list');
    this.fail();
    return [...this.tasks.values()];
  }
  async getTask(id: string) {
    return this.tasks.get(id)!;
  }
  async createTask(input: NewTask) {
    this.calls.push(`create ${JSON.stringify(input)}`);
    this.fail();
    return this.add(input);
  }
  async updateTask(id: string, patch: TaskPatch) {
    this.calls.push(`update ${id} ${JSON.stringify(patch)}`);
    this.fail();
    const { status, ...rest } = patch;
    this.set(id, { ...rest, ...(status ? { status: 'Done' as const, completedAt: '2025-01-01T00:00:00Z' } : {}) });
    return this.tasks.get(id)!;
  }
  async deleteTask(id: string) {
    this.calls.push(`delete ${id}`);
    this.fail();
    this.tasks.delete(id);
  }
}

class FakeAuth implements Auth {
  users = new Map<string, string>();
  signedIn: Session | null = null;
  async signUp(email: string, password: string) {
    if (this.users.has(email)) throw new ApiError(400, 'exists', 'An account with this email already exists.');
    this.users.set(email, password);
  }
  async signIn(email: string, password: string) {
    if (this.users.get(email) !== password) throw new ApiError(401, 'not_authorized', 'Incorrect email or password.');
    this.signedIn = { email };
    return this.signedIn;
  }
  async signOut() {
    this.signedIn = null;
  }
  async currentSession() {
    return this.signedIn;
  }
  async getIdToken() {
    return 'token';
  }
}

function renderApp(api: FakeApi, session: Session | null = { email: 'a@example.test' }, auth = new FakeAuth()) {
  auth.signedIn = session;
  render(<App auth={auth} api={api} initialSession={session} pollIntervalMs={20} />);
  return auth;
}

const row = (title: string) => screen.getByText(title, { selector: '[data-testid="task-title"]' }).closest('li')!;
const announcer = () => screen.getByTestId('announcer');

describe('App', () => {
  it('signs up, signs in and signs out', async () => {
    const api = new FakeApi();
    renderApp(api, null);
    fireEvent.change(screen.getByLabelText('Email'), { target: { value: 'a@example.test' } });
    fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'Secret-123' } });

    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByText('Incorrect email or password.')).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: 'Sign up' }));
    expect(await screen.findByText('Account created for a@example.test. You can sign in now.')).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByTestId('tasks-empty')).toBeTruthy();
    expect(screen.getByTestId('signed-in-as').textContent).toBe('a@example.test');

    fireEvent.click(screen.getByRole('button', { name: 'Sign out' }));
    expect(await screen.findByRole('button', { name: 'Sign in' })).toBeTruthy();
  });

  it('shows loading, then the empty state', async () => {
    const api = new FakeApi();
    renderApp(api);
    expect(screen.getByTestId('tasks-loading')).toBeTruthy();
    expect(await screen.findByText('No tasks yet. Add one above.')).toBeTruthy();
  });

  it('creates a task with the due time sent in UTC', async () => {
    const api = new FakeApi();
    renderApp(api);
    await screen.findByTestId('tasks-empty');
    const form = screen.getByTestId('create-task-form');
    fireEvent.change(within(form).getByLabelText('Title'), { target: { value: 'Pay rent' } });
    fireEvent.change(within(form).getByLabelText('Due'), { target: { value: '2099-07-01T09:30' } });
    fireEvent.click(screen.getByRole('button', { name: 'Add task' }));

    const r = await waitFor(() => row('Pay rent'));
    expect(within(r).getByTestId('task-status').textContent).toBe('Pending');
    expect(within(r).getByTestId('task-time-left').textContent).toMatch(/^\d+d \d+h left$/);
    expect(api.calls).toContain('create {"title":"Pay rent","dueAt":"2099-07-01T07:30:00Z"}');
    expect(announcer().textContent).toBe('Task "Pay rent" added.');
    expect((within(form).getByLabelText('Title') as HTMLInputElement).value).toBe('');
  });

  it('does not send a task without a due time', async () => {
    const api = new FakeApi();
    renderApp(api);
    await screen.findByTestId('tasks-empty');
    const form = screen.getByTestId('create-task-form');
    fireEvent.change(within(form).getByLabelText('Title'), { target: { value: 'Pay rent' } });
    fireEvent.click(screen.getByRole('button', { name: 'Add task' }));
    expect(await screen.findByText('Enter a valid due date and time.')).toBeTruthy();
    expect(within(form).getByLabelText('Due').getAttribute('aria-invalid')).toBe('true');
    expect(api.calls.some((c) => c.startsWith('create'))).toBe(false);
  });

  it('polls while a task is pending and announces the expiry', async () => {
    const api = new FakeApi();
    const t = api.add({ title: 'Soon', dueAt: '2020-01-01T00:00:00Z' });
    renderApp(api);
    await waitFor(() => row('Soon'));
    act(() => api.set(t.id, { status: 'Expired', expiredAt: '2020-01-01T00:00:01Z' }));
    await waitFor(() => expect(within(row('Soon')).getByTestId('task-status').textContent).toBe('Expired'));
    expect(announcer().textContent).toBe('Task "Soon" expired.');
    expect(within(row('Soon')).queryByRole('button', { name: 'Complete' })).toBeNull();
    expect(within(row('Soon')).getByRole('button', { name: 'Delete' })).toBeTruthy();
  });

  it('completes a task', async () => {
    const api = new FakeApi();
    const t = api.add({ title: 'Write report', dueAt: '2099-01-01T00:00:00Z' });
    renderApp(api);
    await waitFor(() => row('Write report'));
    fireEvent.click(within(row('Write report')).getByRole('button', { name: 'Complete' }));
    await waitFor(() => expect(within(row('Write report')).getByTestId('task-status').textContent).toBe('Done'));
    expect(api.calls).toContain(`update ${t.id} {"status":"done"}`);
    expect(within(row('Write report')).queryByRole('button', { name: 'Edit' })).toBeNull();
  });

  it('shows a 409 message as written', async () => {
    const api = new FakeApi();
    api.add({ title: 'Late', dueAt: '2099-01-01T00:00:00Z' });
    renderApp(api);
    await waitFor(() => row('Late'));
    api.nextError = new ApiError(409, 'not_pending', 'This task has already expired.');
    fireEvent.click(within(row('Late')).getByRole('button', { name: 'Complete' }));
    expect(await screen.findByText('This task has already expired.')).toBeTruthy();
  });

  it('edits only the changed fields, and Escape cancels', async () => {
    const api = new FakeApi();
    const t = api.add({ title: 'Draft', description: 'first', dueAt: '2099-01-01T10:00:00Z' });
    renderApp(api);
    await waitFor(() => row('Draft'));

    fireEvent.click(within(row('Draft')).getByRole('button', { name: 'Edit' }));
    let form = screen.getByTestId('edit-task-form');
    expect(document.activeElement).toBe(within(form).getByLabelText('Title'));
    expect((within(form).getByLabelText('Due') as HTMLInputElement).value).toBe('2099-01-01T11:00'); // the input normalizes ":00" seconds away
    fireEvent.keyDown(within(form).getByLabelText('Title'), { key: 'Escape' });
    expect(screen.queryByTestId('edit-task-form')).toBeNull();
    expect(document.activeElement).toBe(within(row('Draft')).getByRole('button', { name: 'Edit' }));

    fireEvent.click(within(row('Draft')).getByRole('button', { name: 'Edit' }));
    form = screen.getByTestId('edit-task-form');
    fireEvent.change(within(form).getByLabelText('Title'), { target: { value: 'Final' } });
    fireEvent.change(within(form).getByLabelText('Due'), { target: { value: '2099-01-02T12:00' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save' }));
    await waitFor(() => row('Final'));
    expect(api.calls).toContain(`update ${t.id} {"title":"Final","dueAt":"2099-01-02T11:00:00Z"}`);
    expect(screen.queryByTestId('edit-task-form')).toBeNull();
  });

  it('deletes a task', async () => {
    const api = new FakeApi();
    const t = api.add({ title: 'Old', dueAt: '2020-01-01T00:00:00Z', status: 'Done' });
    renderApp(api);
    await waitFor(() => row('Old'));
    fireEvent.click(within(row('Old')).getByRole('button', { name: 'Delete' }));
    expect(await screen.findByTestId('tasks-empty')).toBeTruthy();
    expect(api.calls).toContain(`delete ${t.id}`);
    expect(announcer().textContent).toBe('Task "Old" deleted.');
  });

  it('returns to sign-in when the API says the session ended', async () => {
    const api = new FakeApi();
    api.nextError = new ApiError(401, 'http_401', 'Unauthorized');
    const auth = renderApp(api);
    expect(await screen.findByText('Your session has ended. Please sign in again.')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Sign in' })).toBeTruthy();
    expect(auth.signedIn).toBeNull();
  });

  it('keeps the list and shows a generic message when a poll fails with 5xx', async () => {
    const api = new FakeApi();
    api.add({ title: 'Keep me', dueAt: '2099-01-01T00:00:00Z' });
    renderApp(api);
    await waitFor(() => row('Keep me'));
    api.nextError = new ApiError(500, 'internal', 'panic: nil map');
    expect(await screen.findByText('Something went wrong on our side. Please try again.')).toBeTruthy();
    expect(row('Keep me')).toBeTruthy();
    // Polling goes on after the failure and clears the message.
    await waitFor(() => expect(screen.getByTestId('tasks-error').textContent).toBe(''));
  });

  it('shows the notification switch for the signed-in user, next to the tasks', async () => {
    const api = new FakeApi();
    const notifications = {
      calls: [] as string[],
      async getNotifications() {
        this.calls.push('get');
        return { enabled: true, status: 'pending-confirmation' as const, email: 'a@example.test' };
      },
      async setNotifications(enabled: boolean) {
        this.calls.push(`put ${enabled}`);
        return { enabled, status: 'off' as const };
      },
    };
    const auth = new FakeAuth();
    auth.signedIn = { email: 'a@example.test' };
    render(<App auth={auth} api={api} notifications={notifications} initialSession={auth.signedIn} pollIntervalMs={20} />);
    const sw = await screen.findByRole('switch', { name: 'Email me when a task expires: on' });
    expect(await screen.findByText(/^Waiting for confirmation/)).toBeTruthy();
    expect(await screen.findByTestId('tasks-empty')).toBeTruthy();
    fireEvent.click(sw);
    await waitFor(() => expect(sw.getAttribute('aria-checked')).toBe('false'));
    expect(announcer().textContent).toBe('Expiry emails turned off.');
    expect(notifications.calls).toEqual(['get', 'put false']);
  });
});
