// @vitest-environment jsdom
import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SendOptions, TaskApi } from '../api';
import type { Auth, Session } from '../auth';
import { ApiError, NetworkError } from '../http';
import type { NewTask, Task, TaskPatch } from '../types';
import { toLocalMinute } from '../duetime';
import { formatRemindAt, REMINDER_STORAGE_KEY, remindAtMs } from '../reminder';
import { browserTimeZone } from '../timezone';
import { App } from './App';

const originalTZ = process.env.TZ;
beforeAll(() => {
  process.env.TZ = 'Europe/Berlin';
});
afterAll(() => {
  if (originalTZ === undefined) delete process.env.TZ;
  else process.env.TZ = originalTZ;
});
afterEach(() => {
  cleanup();
  localStorage.clear(); // the remembered reminder
});

/** remindAt as the API sets it: dueAt minus the reminder's offset, absent for none (or no reminder). */
function withRemindAt(t: Task): Task {
  const { remindAt: _, ...rest } = t;
  const at = t.reminder ? remindAtMs(Date.parse(t.dueAt), t.reminder) : null;
  return at === null ? rest : { ...rest, remindAt: new Date(at).toISOString().replace('.000Z', 'Z') };
}

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
    this.tasks.set(id, withRemindAt(task));
    return this.tasks.get(id)!;
  }
  set(id: string, patch: Partial<Task>) {
    this.tasks.set(id, withRemindAt({ ...this.tasks.get(id)!, ...patch }));
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
  async updateTask(id: string, patch: TaskPatch, opts?: SendOptions) {
    this.calls.push(`update ${id} ${JSON.stringify(patch)}${opts?.keepalive ? ' keepalive' : ''}`);
    this.fail();
    const { status, ...rest } = patch;
    this.set(id, { ...rest, ...(status ? { status: 'Done' as const, completedAt: '2025-01-01T00:00:00Z' } : {}) });
    return this.tasks.get(id)!;
  }
  async deleteTask(id: string, opts?: SendOptions) {
    this.calls.push(`delete ${id}${opts?.keepalive ? ' keepalive' : ''}`);
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
    return { confirmed: true };
  }
  async confirmSignUp() {}
  async resendSignUpCode() {}
  async signIn(email: string, password: string) {
    if (this.users.get(email) !== password) throw new ApiError(401, 'not_authorized', 'Incorrect email or password.');
    this.signedIn = { email, emailVerified: this.verified.has(email) };
    return this.signedIn;
  }
  async signOut() {
    this.signedIn = null;
  }
  codes = new Map<string, string>();
  async requestPasswordReset(email: string) {
    if (this.users.has(email)) this.codes.set(email, '123456');
  }
  async confirmPasswordReset(email: string, code: string, password: string) {
    if (this.codes.get(email) !== code) throw new ApiError(400, 'code_mismatch', 'That code is wrong or has expired. Ask for a new one.');
    this.users.set(email, password);
  }
  verified = new Set<string>();
  verifyCalls: string[] = [];
  async requestEmailVerification() {
    if (!this.signedIn) throw new ApiError(401, 'unauthorized', 'Sign in again.');
    this.verifyCalls.push('code');
    this.codes.set(`verify ${this.signedIn.email}`, '654321');
  }
  async verifyEmail(code: string) {
    if (!this.signedIn) throw new ApiError(401, 'unauthorized', 'Sign in again.');
    this.verifyCalls.push(`verify ${code}`);
    if (this.codes.get(`verify ${this.signedIn.email}`) !== code.trim()) {
      throw new ApiError(400, 'code_mismatch', 'That code is wrong or has expired. Ask for a new one.');
    }
    this.verified.add(this.signedIn.email);
  }
  async currentSession() {
    return this.signedIn;
  }
  async getIdToken() {
    return 'token';
  }
}

function renderApp(api: FakeApi, session: Session | null = { email: 'a@example.test' }, auth = new FakeAuth(), undoDelayMs = 60) {
  auth.signedIn = session;
  render(<App auth={auth} api={api} initialSession={session} pollIntervalMs={20} undoDelayMs={undoDelayMs} />);
  return auth;
}

const row = (title: string) => screen.getByText(title, { selector: '[data-testid="task-title"]' }).closest('li')!;
const announcer = () => screen.getByTestId('announcer');
const tab = (name: string) => fireEvent.click(screen.getByRole('button', { name: new RegExp(`^${name} \\(\\d+\\)$`) }));
/** A deadline `days` from today at hh:mm local time: the field's value and the API's UTC. */
function soon(days: number, hh = 9, mm = 30) {
  const d = new Date();
  d.setDate(d.getDate() + days);
  d.setHours(hh, mm, 0, 0);
  return { local: toLocalMinute(d), utc: d.toISOString().replace('.000Z', 'Z') };
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('App', () => {
  it('signs in; signs up with a live password checklist and is signed in at once; signs out', async () => {
    const api = new FakeApi();
    renderApp(api, null);
    fireEvent.change(screen.getByLabelText('Email'), { target: { value: 'a@example.test' } });
    fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'Secret-123' } });
    expect(screen.getByLabelText('Password').getAttribute('autocomplete')).toBe('current-password');
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByText('Incorrect email or password.')).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: 'Create an account' }));
    expect(screen.getByRole('heading', { name: 'Create an account' })).toBeTruthy();
    const pw = screen.getByLabelText('Password');
    expect(pw.getAttribute('autocomplete')).toBe('new-password');
    fireEvent.change(pw, { target: { value: 'password' } });
    const unmet = () => [...screen.getByTestId('password-rules').querySelectorAll('[data-met="false"]')].map((li) => li.getAttribute('data-rule'));
    expect(unmet()).toEqual(['length', 'upper', 'digit', 'symbol']);
    fireEvent.click(screen.getByRole('button', { name: 'Sign up' }));
    expect(await screen.findByText('The password does not meet every rule below yet.')).toBeTruthy();
    fireEvent.change(pw, { target: { value: 'Secret-horse-12' } });
    expect(unmet()).toEqual([]);
    fireEvent.click(screen.getByRole('button', { name: 'Sign up' }));
    expect(await screen.findByTestId('tasks-empty')).toBeTruthy();
    expect(screen.getByTestId('signed-in-as').textContent).toBe('a@example.test');
    // Focus goes to the new task's title.
    expect(document.activeElement).toBe(within(screen.getByTestId('create-task-form')).getByLabelText('Title'));

    fireEvent.click(screen.getByRole('button', { name: 'Sign out' }));
    expect(await screen.findByRole('button', { name: 'Sign in' })).toBeTruthy();
  });

  it('offers an unverified address a code, refuses a wrong one, and shows it verified', async () => {
    const api = new FakeApi();
    const auth = new FakeAuth();
    auth.users.set('a@example.test', 'Secret-horse-12');
    renderApp(api, null, auth);
    fireEvent.change(screen.getByLabelText('Email'), { target: { value: 'a@example.test' } });
    fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'Secret-horse-12' } });
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    const banner = await screen.findByRole('region', { name: 'Verify your email address' });
    expect(banner.getAttribute('data-status')).toBe('unverified');
    expect(banner.textContent).toContain('a@example.test is not verified yet');
    // The sign-in still puts focus on the new task's title, not the banner.
    await screen.findByTestId('tasks-empty');
    expect(document.activeElement).toBe(within(screen.getByTestId('create-task-form')).getByLabelText('Title'));

    fireEvent.click(within(banner).getByRole('button', { name: 'Send verification code' }));
    const field = await within(banner).findByLabelText('Verification code');
    expect(document.activeElement).toBe(field);
    expect(within(banner).getByTestId('verify-email-info').textContent).toBe('We sent a code to a@example.test: look in your inbox.');
    fireEvent.click(within(banner).getByRole('button', { name: 'Verify email' }));
    expect(within(banner).getByTestId('verify-email-error').textContent).toBe('Enter the code from the email.');
    fireEvent.change(field, { target: { value: '000000' } });
    fireEvent.click(within(banner).getByRole('button', { name: 'Verify email' }));
    expect(await within(banner).findByText('That code is wrong or has expired. Ask for a new one.')).toBeTruthy();
    expect(field.getAttribute('aria-invalid')).toBe('true');
    expect(field.getAttribute('aria-describedby')?.split(' ')).toContain(within(banner).getByTestId('verify-email-error').id);

    fireEvent.change(field, { target: { value: ' 654321 ' } });
    fireEvent.click(within(banner).getByRole('button', { name: 'Verify email' }));
    const done = await screen.findByRole('region', { name: 'Email address verified' });
    expect(done.getAttribute('data-status')).toBe('verified');
    expect(announcer().textContent).toBe('Your email address a@example.test is verified.');
    expect(auth.verifyCalls).toEqual(['code', 'verify 000000', 'verify  654321 ']);

    // Signed in again, a verified address shows no banner.
    fireEvent.click(screen.getByRole('button', { name: 'Sign out' }));
    fireEvent.change(await screen.findByLabelText('Email'), { target: { value: 'a@example.test' } });
    fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'Secret-horse-12' } });
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    await screen.findByTestId('tasks-empty');
    expect(screen.queryByTestId('verify-email')).toBeNull();
  });

  it('shows no banner when whether the address is verified is not known', async () => {
    renderApp(new FakeApi(), { email: 'a@example.test' });
    await screen.findByTestId('tasks-empty');
    expect(screen.queryByTestId('verify-email')).toBeNull();
  });

  it('resets a password with the emailed code and signs in', async () => {
    const api = new FakeApi();
    const auth = new FakeAuth();
    auth.users.set('a@example.test', 'Old-password-1');
    renderApp(api, null, auth);
    fireEvent.click(screen.getByRole('button', { name: 'Forgot your password?' }));
    fireEvent.change(screen.getByLabelText('Email'), { target: { value: 'a@example.test' } });
    fireEvent.click(screen.getByRole('button', { name: 'Send code' }));
    expect(await screen.findByText(/a code is on its way/)).toBeTruthy();
    fireEvent.change(screen.getByLabelText('Code from the email'), { target: { value: '000000' } });
    fireEvent.change(screen.getByLabelText('New password'), { target: { value: 'New-password-2' } });
    expect(screen.getByLabelText('New password').getAttribute('autocomplete')).toBe('new-password');
    fireEvent.click(screen.getByRole('button', { name: 'Set password and sign in' }));
    expect(await screen.findByText('That code is wrong or has expired. Ask for a new one.')).toBeTruthy();
    fireEvent.change(screen.getByLabelText('Code from the email'), { target: { value: '123456' } });
    fireEvent.click(screen.getByRole('button', { name: 'Set password and sign in' }));
    expect(await screen.findByTestId('tasks-empty')).toBeTruthy();
    expect(auth.users.get('a@example.test')).toBe('New-password-2');
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
    const due = soon(30);
    fireEvent.change(within(form).getByLabelText('Due'), { target: { value: due.local } });
    fireEvent.click(screen.getByRole('button', { name: 'Add task' }));

    const r = await waitFor(() => row('Pay rent'));
    expect(within(r).getByTestId('task-status').textContent).toBe('Pending');
    expect(within(r).getByTestId('task-time-left').textContent).toMatch(/^\d+d \d+h left$/);
    expect(api.calls).toContain(`create {"title":"Pay rent","dueAt":"${due.utc}","reminder":"1h"}`);
    expect(announcer().textContent).toMatch(/^Task ‘Pay rent’ added, due /);
    expect((within(form).getByLabelText('Title') as HTMLInputElement).value).toBe('');
    expect(within(form).getByLabelText('Due').getAttribute('step')).toBeNull();
  });

  it('does not send a task without a due time', async () => {
    const api = new FakeApi();
    renderApp(api);
    await screen.findByTestId('tasks-empty');
    const form = screen.getByTestId('create-task-form');
    fireEvent.change(within(form).getByLabelText('Title'), { target: { value: 'Pay rent' } });
    fireEvent.click(screen.getByRole('button', { name: 'Add task' }));
    expect(await screen.findByText('Choose when the task is due.')).toBeTruthy();
    expect(within(form).getByLabelText('Due').getAttribute('aria-invalid')).toBe('true');
    expect(api.calls.some((c) => c.startsWith('create'))).toBe(false);
  });

  it('polls while a task is pending and announces the expiry', async () => {
    const api = new FakeApi();
    const t = api.add({ title: 'Soon', dueAt: '2020-01-01T00:00:00Z' });
    renderApp(api);
    await waitFor(() => row('Soon'));
    act(() => api.set(t.id, { status: 'Expired', expiredAt: '2020-01-01T00:00:01Z' }));
    await waitFor(() => expect(announcer().textContent).toBe('Task "Soon" expired.'));
    expect(screen.getByRole('button', { name: 'Expired (1)' })).toBeTruthy();
    tab('Expired');
    expect(within(row('Soon')).getByTestId('task-status').textContent).toBe('Expired');
    expect(within(row('Soon')).getByTestId('task-expired-ago').textContent).toMatch(/^expired \d+ days ago$/);
    expect(within(row('Soon')).queryByRole('button', { name: /^Complete/ })).toBeNull();
    expect(within(row('Soon')).getByRole('button', { name: 'Delete ‘Soon’' })).toBeTruthy();
  });

  it('completes a task', async () => {
    const api = new FakeApi();
    const t = api.add({ title: 'Write report', dueAt: '2099-01-01T00:00:00Z' });
    renderApp(api);
    await waitFor(() => row('Write report'));
    fireEvent.click(within(row('Write report')).getByRole('button', { name: 'Complete ‘Write report’' }));
    // Shown as done at once; sent when the undo time is over.
    expect(screen.getByTestId('undo-toast').textContent).toMatch(/Completed ‘Write report’/);
    expect(api.calls.some((c) => c.startsWith('update'))).toBe(false);
    await waitFor(() => expect(api.calls).toContain(`update ${t.id} {"status":"done"}`));
    tab('Done');
    expect(within(row('Write report')).getByTestId('task-status').textContent).toBe('✓ Done');
    expect(within(row('Write report')).queryByRole('button', { name: /^Edit/ })).toBeNull();
  });

  it('shows a 409 message as written', async () => {
    const api = new FakeApi();
    api.add({ title: 'Late', dueAt: '2099-01-01T00:00:00Z' });
    renderApp(api);
    await waitFor(() => row('Late'));
    api.nextError = new ApiError(409, 'not_pending', 'This task has already expired.');
    fireEvent.click(within(row('Late')).getByRole('button', { name: 'Complete ‘Late’' }));
    expect(await screen.findByText('‘Late’ could not be completed: This task has already expired.')).toBeTruthy();
  });

  it('edits only the changed fields, and Escape cancels', async () => {
    const api = new FakeApi();
    const first = soon(10, 11, 0);
    const second = soon(11, 12, 0);
    const t = api.add({ title: 'Draft', description: 'first', dueAt: first.utc });
    renderApp(api);
    await waitFor(() => row('Draft'));

    fireEvent.click(within(row('Draft')).getByRole('button', { name: 'Edit ‘Draft’' }));
    let form = screen.getByTestId('edit-task-form');
    expect(document.activeElement).toBe(within(form).getByLabelText('Title'));
    expect((within(form).getByLabelText('Due') as HTMLInputElement).value).toBe(first.local); // minutes, no seconds
    fireEvent.keyDown(within(form).getByLabelText('Title'), { key: 'Escape' });
    expect(screen.queryByTestId('edit-task-form')).toBeNull();
    expect(document.activeElement).toBe(within(row('Draft')).getByRole('button', { name: 'Edit ‘Draft’' }));

    fireEvent.click(within(row('Draft')).getByRole('button', { name: 'Edit ‘Draft’' }));
    form = screen.getByTestId('edit-task-form');
    fireEvent.change(within(form).getByLabelText('Title'), { target: { value: 'Final' } });
    fireEvent.change(within(form).getByLabelText('Due'), { target: { value: second.local } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save' }));
    await waitFor(() => row('Final'));
    expect(api.calls).toContain(`update ${t.id} {"title":"Final","dueAt":"${second.utc}"}`);
    expect(screen.queryByTestId('edit-task-form')).toBeNull();
  });

  it('deletes a task', async () => {
    const api = new FakeApi();
    const t = api.add({ title: 'Old', dueAt: '2020-01-01T00:00:00Z', status: 'Done' });
    renderApp(api);
    tab('Done');
    await waitFor(() => row('Old'));
    fireEvent.click(within(row('Old')).getByRole('button', { name: 'Delete ‘Old’' }));
    expect(await screen.findByTestId('tasks-empty')).toBeTruthy();
    expect(announcer().textContent).toBe('Task ‘Old’ deleted. Undo is available.');
    await waitFor(() => expect(api.calls).toContain(`delete ${t.id}`));
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
    // Past its deadline but not Expired yet: polled every interval.
    api.add({ title: 'Keep me', dueAt: '2020-01-01T00:00:00Z' });
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
      async setTimeZone(timeZone: string) {
        this.calls.push(`put zone ${timeZone}`);
        return { enabled: true, status: 'pending-confirmation' as const, timeZone };
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
    // Once after sign-in, the browser's time zone is saved for the emails.
    const zone = browserTimeZone();
    expect(notifications.calls).toEqual(zone ? ['get', `put zone ${zone}`, 'put false'] : ['get', 'put false']);
  });

  it('undo of a delete restores the task and sends nothing', async () => {
    const api = new FakeApi();
    const a = api.add({ title: 'Pay rent', dueAt: '2099-01-01T00:00:00Z' });
    api.add({ title: 'Call mum', dueAt: '2099-01-02T00:00:00Z' });
    renderApp(api, undefined, undefined, 400);
    await waitFor(() => row('Pay rent'));
    fireEvent.click(within(row('Pay rent')).getByRole('button', { name: 'Delete ‘Pay rent’' }));
    expect(screen.queryByText('Pay rent', { selector: '[data-testid="task-title"]' })).toBeNull();
    // Focus goes to the next task, not the heading or <body>.
    expect(document.activeElement).toBe(within(row('Call mum')).getByTestId('task-title'));
    fireEvent.click(screen.getByRole('button', { name: 'Undo: Deleted ‘Pay rent’.' }));
    expect(row('Pay rent')).toBeTruthy();
    expect(document.activeElement).toBe(within(row('Pay rent')).getByTestId('task-title'));
    await sleep(500);
    expect(api.calls.filter((c) => !c.startsWith('list'))).toEqual([]);
    expect(api.tasks.has(a.id)).toBe(true);
    expect(screen.queryByTestId('undo-toast')).toBeNull();
  });

  it('sends waiting changes at once, with keepalive, when the page closes', async () => {
    const api = new FakeApi();
    const a = api.add({ title: 'Pay rent', dueAt: '2099-01-01T00:00:00Z' });
    const b = api.add({ title: 'Call mum', dueAt: '2099-01-02T00:00:00Z' });
    renderApp(api, undefined, undefined, 60_000);
    await waitFor(() => row('Pay rent'));
    fireEvent.click(within(row('Pay rent')).getByRole('button', { name: 'Complete ‘Pay rent’' }));
    fireEvent.click(within(row('Call mum')).getByRole('button', { name: 'Delete ‘Call mum’' }));
    expect(screen.getByTestId('undo-toast').textContent).toMatch(/2 changes/);
    act(() => window.dispatchEvent(new Event('pagehide')));
    await waitFor(() => expect(api.calls).toEqual(expect.arrayContaining([`update ${a.id} {"status":"done"} keepalive`, `delete ${b.id} keepalive`])));
  });

  it('recreates an expired task with its title, description and a new deadline', async () => {
    const api = new FakeApi();
    api.add({ title: 'Renew passport', description: 'at the town hall', dueAt: '2020-01-01T00:00:00Z', status: 'Expired', expiredAt: '2020-01-01T00:00:00Z' });
    renderApp(api);
    await screen.findByRole('button', { name: 'Expired (1)' });
    tab('Expired');
    fireEvent.click(within(row('Renew passport')).getByRole('button', { name: 'Recreate ‘Renew passport’' }));
    const form = screen.getByTestId('recreate-task-form');
    expect((within(form).getByLabelText('Title') as HTMLInputElement).value).toBe('Renew passport');
    expect((within(form).getByLabelText('Description') as HTMLTextAreaElement).value).toBe('at the town hall');
    const due = (within(form).getByLabelText('Due') as HTMLInputElement).value;
    expect(Date.parse(due)).toBeGreaterThan(Date.now());
    fireEvent.click(within(form).getByRole('button', { name: 'Recreate' }));
    await waitFor(() => expect(screen.getByRole('button', { name: 'Pending (1)' }).getAttribute('aria-pressed')).toBe('true'));
    expect(api.calls.find((c) => c.startsWith('create'))).toMatch(/"title":"Renew passport",.*"description":"at the town hall"/);
    expect(row('Renew passport').getAttribute('data-status')).toBe('Pending');
  });

  it('extends an expired task: a new task with a new deadline replaces it', async () => {
    const api = new FakeApi();
    const old = api.add({ title: 'Renew passport', dueAt: '2020-01-01T00:00:00Z', status: 'Expired', expiredAt: '2020-01-01T00:00:00Z' });
    renderApp(api);
    await screen.findByRole('button', { name: 'Expired (1)' });
    tab('Expired');
    fireEvent.click(within(row('Renew passport')).getByRole('button', { name: 'Extend ‘Renew passport’' }));
    const form = screen.getByTestId('recreate-task-form');
    fireEvent.click(within(form).getByRole('button', { name: 'Extend' }));
    await waitFor(() => expect(api.calls).toContain(`delete ${old.id}`));
    expect(screen.getByRole('button', { name: 'Expired (0)' })).toBeTruthy();
    expect(row('Renew passport').getAttribute('data-status')).toBe('Pending');
  });

  it('a task that expires while edited closes the form and keeps the typed deadline', async () => {
    const api = new FakeApi();
    // Past its deadline but not Expired yet: the page polls every interval.
    const t = api.add({ title: 'Draft', dueAt: '2020-01-01T00:00:00Z' });
    renderApp(api);
    await waitFor(() => row('Draft'));
    fireEvent.click(within(row('Draft')).getByRole('button', { name: 'Edit ‘Draft’' }));
    const form = screen.getByTestId('edit-task-form');
    const typed = soon(5, 5, 6);
    fireEvent.change(within(form).getByLabelText('Due'), { target: { value: typed.local } });
    act(() => api.set(t.id, { status: 'Expired', expiredAt: new Date().toISOString() }));
    const notice = await screen.findByTestId('expired-while-editing');
    expect(notice.textContent).toMatch(/‘Draft’ expired while you were editing it/);
    expect(screen.queryByTestId('edit-task-form')).toBeNull();
    fireEvent.click(within(notice).getByRole('button', { name: 'Recreate with my changes' }));
    const re = screen.getByTestId('recreate-draft-form');
    expect((within(re).getByLabelText('Due') as HTMLInputElement).value).toBe(typed.local);
    fireEvent.click(within(re).getByRole('button', { name: 'Recreate' }));
    await waitFor(() => expect(api.calls).toContain(`create {"title":"Draft","dueAt":"${typed.utc}","reminder":"1h"}`));
  });

  it('quick picks fill the due field; past times are refused in local words with aria-invalid', async () => {
    const api = new FakeApi();
    renderApp(api);
    await screen.findByTestId('tasks-empty');
    const form = screen.getByTestId('create-task-form');
    const due = within(form).getByLabelText('Due') as HTMLInputElement;
    expect(due.min).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d$/);
    expect(due.max).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d$/);
    fireEvent.click(within(form).getByRole('button', { name: 'Tomorrow 09:00' }));
    expect(due.value).toMatch(/T09:00$/);
    fireEvent.change(within(form).getByLabelText('Title'), { target: { value: 'Old' } });
    fireEvent.change(due, { target: { value: '2020-01-01T10:00' } });
    fireEvent.click(screen.getByRole('button', { name: 'Add task' }));
    expect((await screen.findByTestId('create-task-error')).textContent).toMatch(/^Choose a time in the future: it is already /);
    expect(due.getAttribute('aria-invalid')).toBe('true');
    // An API refusal in UTC words is rewritten too.
    api.nextError = new ApiError(400, 'invalid_request', 'dueAt 2026-01-01T00:00:00Z is not in the future');
    fireEvent.change(due, { target: { value: soon(3).local } });
    fireEvent.click(screen.getByRole('button', { name: 'Add task' }));
    await waitFor(() => expect(screen.getByTestId('create-task-error').textContent).toMatch(/^Choose a time in the future/));
    expect(screen.getByTestId('create-task-error').textContent).not.toMatch(/Z\b|dueAt/);
  });

  it('Add shows progress, keeps text typed while saving, and a later success clears a network error', async () => {
    const api = new FakeApi();
    renderApp(api);
    await screen.findByTestId('tasks-empty');
    const form = screen.getByTestId('create-task-form');
    const title = within(form).getByLabelText('Title') as HTMLInputElement;
    api.nextError = new NetworkError(new TypeError('offline')) as unknown as ApiError;
    fireEvent.change(title, { target: { value: 'A' } });
    fireEvent.change(within(form).getByLabelText('Due'), { target: { value: soon(3).local } });
    fireEvent.click(within(form).getByRole('button', { name: 'Add task' }));
    expect((await screen.findByTestId('create-task-error')).textContent).toMatch(/Could not reach the server/);

    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const create = api.createTask.bind(api);
    api.createTask = async (input) => {
      await gate;
      return create(input);
    };
    fireEvent.click(within(form).getByRole('button', { name: 'Add task' }));
    const busy = await within(form).findByRole('button', { name: 'Adding…' });
    expect((busy as HTMLButtonElement).disabled).toBe(true);
    fireEvent.change(title, { target: { value: 'B typed while saving' } });
    release();
    await waitFor(() => row('A'));
    expect(title.value).toBe('B typed while saving');
    expect(screen.getByTestId('create-task-error').textContent).toBe('');
  });

  it('tabs count and filter the tasks, search by title, clear done and expired, paginate', async () => {
    const api = new FakeApi();
    for (let i = 0; i < 25; i++) api.add({ title: `Task ${String(i).padStart(2, '0')}`, dueAt: `2099-01-01T00:${String(i).padStart(2, '0')}:00Z` });
    api.add({ title: 'Finished', dueAt: '2020-01-01T00:00:00Z', status: 'Done' });
    api.add({ title: 'Missed', dueAt: '2020-01-01T00:00:00Z', status: 'Expired' });
    renderApp(api);
    await screen.findByRole('button', { name: 'Pending (25)' });
    expect(screen.getByRole('button', { name: 'Done (1)' })).toBeTruthy();
    expect(screen.getAllByTestId('task-row')).toHaveLength(20);
    fireEvent.click(screen.getByRole('button', { name: /^Show 5 more/ }));
    expect(screen.getAllByTestId('task-row')).toHaveLength(25);
    fireEvent.change(screen.getByLabelText('Search titles'), { target: { value: 'task 1' } });
    expect(screen.getAllByTestId('task-row')).toHaveLength(10);
    fireEvent.click(screen.getByRole('button', { name: 'Clear done and expired' }));
    expect(screen.getByRole('button', { name: 'Done (0)' })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Expired (0)' })).toBeTruthy();
    await waitFor(() => expect(api.calls.filter((c) => c.startsWith('delete'))).toHaveLength(2));
  });

  it('opens the task named by #/tasks/<id>: its tab, highlighted, focused', async () => {
    const api = new FakeApi();
    api.add({ title: 'Other', dueAt: '2099-01-01T00:00:00Z' });
    const t = api.add({ title: 'From the email', dueAt: '2020-01-01T00:00:00Z', status: 'Expired' });
    window.location.hash = `#/tasks/${t.id}`;
    try {
      renderApp(api);
      await waitFor(() => expect(row('From the email').className).toMatch(/task-highlight/));
      expect(screen.getByRole('button', { name: 'Expired (1)' }).getAttribute('aria-pressed')).toBe('true');
      // The focus follows the highlight in a later effect: wait for it too.
      await waitFor(() => expect(document.activeElement).toBe(within(row('From the email')).getByTestId('task-title')));
    } finally {
      window.location.hash = '';
    }
  });
});

describe('reminder', () => {
  const reminderOf = (form: HTMLElement) => within(form).getByLabelText('Reminder') as HTMLSelectElement;
  /** A deadline minutes from now, as the Due field's value. */
  const inMinutes = (m: number) => toLocalMinute(new Date(Date.now() + m * 60_000));

  it('offers none, 15 min, 1 h, 1 day; 1 h by default; the last choice becomes the default', async () => {
    const api = new FakeApi();
    renderApp(api);
    await screen.findByTestId('tasks-empty');
    const form = screen.getByTestId('create-task-form');
    const select = reminderOf(form);
    expect([...select.options].map((o) => [o.value, o.text])).toEqual([
      ['none', 'None'],
      ['15m', '15 minutes before'],
      ['1h', '1 hour before'],
      ['1d', '1 day before'],
    ]);
    expect(select.value).toBe('1h');
    fireEvent.change(within(form).getByLabelText('Title'), { target: { value: 'Pay rent' } });
    const due = soon(3, 17, 0);
    fireEvent.change(within(form).getByLabelText('Due'), { target: { value: due.local } });
    fireEvent.change(select, { target: { value: '1d' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Add task' }));
    await waitFor(() => expect(api.calls).toContain(`create {"title":"Pay rent","dueAt":"${due.utc}","reminder":"1d"}`));
    expect(localStorage.getItem(REMINDER_STORAGE_KEY)).toBe('1d');
    // The emptied form, and a later one, start from the last choice.
    await waitFor(() => expect((within(form).getByLabelText('Title') as HTMLInputElement).value).toBe(''));
    expect(reminderOf(form).value).toBe('1d');
    cleanup();
    renderApp(new FakeApi());
    await screen.findByTestId('tasks-empty');
    expect(reminderOf(screen.getByTestId('create-task-form')).value).toBe('1d');
  });

  it('a remembered default that is past for the deadline falls back to the largest one ahead, and says so', async () => {
    localStorage.setItem(REMINDER_STORAGE_KEY, '1d');
    const api = new FakeApi();
    renderApp(api);
    await screen.findByTestId('tasks-empty');
    const form = screen.getByTestId('create-task-form');
    fireEvent.change(within(form).getByLabelText('Title'), { target: { value: 'Soon' } });
    fireEvent.change(within(form).getByLabelText('Due'), { target: { value: inMinutes(40) } });
    expect(reminderOf(form).value).toBe('15m');
    expect(within(form).getByTestId('new-task-reminder-note').textContent).toBe('1 day before is already past, so 15 minutes before is chosen.');
    fireEvent.click(within(form).getByRole('button', { name: 'Add task' }));
    await waitFor(() => expect(api.calls.find((c) => c.startsWith('create'))).toMatch(/"reminder":"15m"}$/));
    expect(localStorage.getItem(REMINDER_STORAGE_KEY)).toBe('1d'); // a fallback is not a choice
  });

  it('a chosen reminder already past is flagged next to the field, and the largest one ahead is offered', async () => {
    const api = new FakeApi();
    renderApp(api);
    await screen.findByTestId('tasks-empty');
    const form = screen.getByTestId('create-task-form');
    const select = reminderOf(form);
    fireEvent.change(within(form).getByLabelText('Due'), { target: { value: inMinutes(40) } });
    fireEvent.change(select, { target: { value: '1h' } });
    const note = within(form).getByTestId('new-task-reminder-note');
    expect(note.textContent).toBe('1 hour before is already past — no reminder will be sent.');
    expect(select.getAttribute('aria-describedby')).toBe(note.id);
    fireEvent.click(within(form).getByRole('button', { name: 'Use 15 minutes before' }));
    expect(select.value).toBe('15m');
    expect(note.textContent).toBe('');
    expect(document.activeElement).toBe(select);
  });

  it('the row shows the reminder time; the edit form changes it with PATCH', async () => {
    const api = new FakeApi();
    const due = soon(2, 17, 55);
    const t = api.add({ title: 'Pay rent', dueAt: due.utc, reminder: '1h' });
    const none = api.add({ title: 'No reminder', dueAt: due.utc, reminder: 'none' });
    renderApp(api);
    await waitFor(() => row('Pay rent'));
    expect(within(row('Pay rent')).getByTestId('task-reminder').textContent).toBe(`Reminder ${formatRemindAt(t.remindAt!, Date.now())}`);
    expect(within(row('Pay rent')).getByTestId('task-reminder').querySelector('time')!.getAttribute('datetime')).toBe(t.remindAt);
    expect(within(row(none.title)).queryByTestId('task-reminder')).toBeNull();

    fireEvent.click(within(row('Pay rent')).getByRole('button', { name: 'Edit ‘Pay rent’' }));
    const form = screen.getByTestId('edit-task-form');
    expect(reminderOf(form).value).toBe('1h');
    fireEvent.change(reminderOf(form), { target: { value: '15m' } });
    fireEvent.click(within(form).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.calls).toContain(`update ${t.id} {"reminder":"15m"}`));
    await waitFor(() => expect(within(row('Pay rent')).getByTestId('task-reminder').textContent).toMatch(/^Reminder /));
    expect(api.tasks.get(t.id)!.remindAt).toBe(new Date(Date.parse(due.utc) - 15 * 60_000).toISOString().replace('.000Z', 'Z'));
  });

  it('the edit form flags a past reminder only once the deadline or the reminder changes', async () => {
    const api = new FakeApi();
    const t = api.add({ title: 'Close', dueAt: new Date(Date.now() + 30 * 60_000).toISOString(), reminder: '1h' });
    renderApp(api);
    await waitFor(() => row('Close'));
    fireEvent.click(within(row('Close')).getByRole('button', { name: 'Edit ‘Close’' }));
    const form = screen.getByTestId('edit-task-form');
    expect(within(form).getByTestId('edit-task-reminder-note').textContent).toBe('');
    fireEvent.change(within(form).getByLabelText('Due'), { target: { value: inMinutes(45) } });
    expect(within(form).getByTestId('edit-task-reminder-note').textContent).toBe('1 hour before is already past — no reminder will be sent.');
    fireEvent.click(within(form).getByRole('button', { name: 'Use 15 minutes before' }));
    fireEvent.click(within(form).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.calls.find((c) => c.startsWith(`update ${t.id}`))).toMatch(/"reminder":"15m"}$/));
  });
});
