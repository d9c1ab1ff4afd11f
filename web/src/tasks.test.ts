import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dueSoon, filterTasks, newTaskFromForm, patchFromForm, pollDelay, sortTasks, statusChanges, tabCounts, tickFor } from './tasks';

// Form checks compare with now; the fixtures are in 2025.
const T0 = Date.parse('2025-01-01T00:00:00Z');
import type { Reminder } from './reminder';
import type { Task, TaskStatus } from './types';

const originalTZ = process.env.TZ;
beforeAll(() => {
  process.env.TZ = 'Europe/Berlin';
});
afterAll(() => {
  if (originalTZ === undefined) delete process.env.TZ;
  else process.env.TZ = originalTZ;
});

function task(id: string, status: TaskStatus, dueAt = '2030-01-01T00:00:00Z', extra: Partial<Task> = {}): Task {
  return { id, title: `T${id}`, status, dueAt, createdAt: dueAt, updatedAt: dueAt, ...extra };
}

describe('pollDelay', () => {
  const now = Date.parse('2030-01-01T00:00:00Z');
  const at = (s: number) => new Date(now + s * 1000).toISOString();
  const cases: { name: string; tasks: Task[]; want: number | null }[] = [
    { name: 'no tasks: no polling', tasks: [], want: null },
    { name: 'only finished tasks: no polling', tasks: [task('1', 'Done'), task('2', 'Expired')], want: null },
    { name: 'just after the next deadline', tasks: [task('1', 'Done', at(5)), task('2', 'Pending', at(10)), task('3', 'Pending', at(20))], want: 10_500 },
    { name: 'a far deadline: once a minute', tasks: [task('1', 'Pending', at(86400))], want: 60_000 },
    { name: 'a pending task past its deadline polls every interval until it expires', tasks: [task('1', 'Pending', at(-1))], want: 3000 },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(pollDelay(c.tasks, now)).toBe(c.want);
    });
  }
  it('uses the given interval', () => {
    expect(pollDelay([task('1', 'Pending', at(-1))], now, 500)).toBe(500);
  });
});

describe('tabs and search', () => {
  const list = [
    task('a', 'Pending', '2030-01-02T00:00:00Z', { title: 'Kuchen für Zoë backen' }),
    task('b', 'Pending', '2030-01-01T00:00:00Z', { title: 'Pay rent' }),
    task('c', 'Done', '2030-01-01T00:00:00Z', { title: 'Pay tax' }),
    task('d', 'Expired', '2030-01-01T00:00:00Z', { title: 'Call mum' }),
  ];
  it('counts each tab', () => expect(tabCounts(list)).toEqual({ Pending: 2, Done: 1, Expired: 1 }));
  it('filters by tab, sorted', () => expect(filterTasks(list, 'Pending', '').map((t) => t.id)).toEqual(['b', 'a']));
  it('searches titles, ignoring case and accents', () => {
    expect(filterTasks(list, 'Pending', 'ZOE').map((t) => t.id)).toEqual(['a']);
    expect(filterTasks(list, 'Done', 'pay').map((t) => t.id)).toEqual(['c']);
    expect(filterTasks(list, 'Expired', 'pay')).toEqual([]);
  });
});

describe('urgency and ticks', () => {
  const now = Date.parse('2030-01-01T00:00:00Z');
  it('due within the hour is soon', () => {
    expect(dueSoon(task('1', 'Pending', '2030-01-01T00:59:00Z'), now)).toBe(true);
    expect(dueSoon(task('1', 'Pending', '2030-01-01T01:01:00Z'), now)).toBe(false);
    expect(dueSoon(task('1', 'Done', '2030-01-01T00:30:00Z'), now)).toBe(false);
  });
  it('ticks every second only in the last hour', () => {
    expect(tickFor('2030-01-01T00:30:00Z', now)).toBe(1000);
    expect(tickFor('2030-01-02T00:00:00Z', now)).toBe(30_000);
  });
});

describe('sortTasks', () => {
  it('puts pending tasks first by soonest deadline, then the rest by latest deadline', () => {
    const got = sortTasks([
      task('done-old', 'Done', '2025-01-01T00:00:00Z'),
      task('pending-late', 'Pending', '2030-06-01T00:00:00Z'),
      task('expired-new', 'Expired', '2025-06-01T00:00:00Z'),
      task('pending-soon', 'Pending', '2030-01-01T00:00:00Z'),
    ]).map((t) => t.id);
    expect(got).toEqual(['pending-soon', 'pending-late', 'expired-new', 'done-old']);
  });
});

describe('statusChanges', () => {
  const cases: { name: string; before: Task[]; after: Task[]; want: string[] }[] = [
    { name: 'nothing changed', before: [task('1', 'Pending')], after: [task('1', 'Pending')], want: [] },
    { name: 'a task expired', before: [task('1', 'Pending')], after: [task('1', 'Expired')], want: ['Task "T1" expired.'] },
    { name: 'a task was completed elsewhere', before: [task('1', 'Pending')], after: [task('1', 'Done')], want: ['Task "T1" is done.'] },
    { name: 'new and removed tasks are not announced', before: [task('1', 'Pending')], after: [task('2', 'Expired')], want: [] },
    {
      name: 'several changes, in list order',
      before: [task('1', 'Pending'), task('2', 'Pending'), task('3', 'Pending')],
      after: [task('3', 'Expired'), task('2', 'Pending'), task('1', 'Expired')],
      want: ['Task "T3" expired.', 'Task "T1" expired.'],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(statusChanges(c.before, c.after)).toEqual(c.want);
    });
  }
});

describe('newTaskFromForm', () => {
  it('builds the request in UTC from the local time', () => {
    expect(newTaskFromForm({ title: '  Pay rent ', description: ' by transfer ', due: '2025-07-01T09:30' }, T0)).toEqual({
      ok: true,
      value: { title: 'Pay rent', description: 'by transfer', dueAt: '2025-07-01T07:30:00Z', reminder: '1h' },
    });
  });
  const reminders: { name: string; due: string; reminder: Reminder | null | undefined; preferred: Reminder; want: Reminder }[] = [
    { name: 'untouched: the preferred', due: '2025-01-02T09:30', reminder: undefined, preferred: '1d', want: '1d' },
    { name: 'untouched, preferred past: the largest still ahead', due: '2025-01-01T01:40', reminder: null, preferred: '1h', want: '15m' },
    { name: 'chosen is sent even when past (the API stores it, sends nothing)', due: '2025-01-01T01:40', reminder: '1h', preferred: '1h', want: '1h' },
    { name: 'chosen none', due: '2025-01-02T09:30', reminder: 'none', preferred: '1h', want: 'none' },
  ];
  for (const c of reminders) {
    it(`reminder: ${c.name}`, () => {
      const r = newTaskFromForm({ title: 'x', description: '', due: c.due, reminder: c.reminder }, T0, c.preferred);
      expect(r.ok && r.value.reminder).toBe(c.want);
    });
  }
  it('leaves out an empty description', () => {
    expect(newTaskFromForm({ title: 'x', description: '   ', due: '2025-01-01T09:30' }, T0)).toEqual({
      ok: true,
      value: { title: 'x', dueAt: '2025-01-01T08:30:00Z', reminder: '1h' },
    });
  });
  const invalid: { name: string; title: string; due: string; field: string }[] = [
    { name: 'blank title', title: '  ', due: '2025-01-01T09:30', field: 'title' },
    { name: 'missing due time', title: 'x', due: '', field: 'due' },
    { name: 'impossible date', title: 'x', due: '2025-02-31T09:30', field: 'due' },
  ];
  for (const c of invalid) {
    it(`rejects ${c.name}`, () => {
      const r = newTaskFromForm({ title: c.title, description: '', due: c.due }, T0);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.field).toBe(c.field);
    });
  }
});

describe('patchFromForm', () => {
  const t = task('1', 'Pending', '2025-07-01T07:30:00Z', { title: 'Pay rent', description: 'by transfer' });
  const cases: { name: string; title: string; description: string; due: string; want: unknown }[] = [
    { name: 'untouched form sends nothing', title: 'Pay rent', description: 'by transfer', due: '2025-07-01T09:30:00', want: null },
    { name: 'title only', title: 'Pay the rent', description: 'by transfer', due: '2025-07-01T09:30', want: { title: 'Pay the rent' } },
    { name: 'clearing the description sends an empty one', title: 'Pay rent', description: '', due: '2025-07-01T09:30', want: { description: '' } },
    { name: 'moving the deadline sends it in UTC', title: 'Pay rent', description: 'by transfer', due: '2025-07-01T18:00', want: { dueAt: '2025-07-01T16:00:00Z' } },
    {
      name: 'every field',
      title: 'B',
      description: 'C',
      due: '2025-12-24T18:00',
      want: { title: 'B', description: 'C', dueAt: '2025-12-24T17:00:00Z' },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(patchFromForm(t, { title: c.title, description: c.description, due: c.due }, T0)).toEqual({ ok: true, value: c.want });
    });
  }
  const r = task('5', 'Pending', '2025-07-01T07:30:00Z', { title: 'A', reminder: '15m', remindAt: '2025-07-01T07:15:00Z' });
  const old = task('6', 'Pending', '2025-07-01T07:30:00Z', { title: 'A' }); // from an API without reminders: 1h
  const reminderCases: { name: string; t: Task; reminder: Reminder | null | undefined; want: unknown }[] = [
    { name: 'the same reminder sends nothing', t: r, reminder: '15m', want: null },
    { name: 'no reminder chosen sends nothing', t: r, reminder: undefined, want: null },
    { name: 'a changed reminder is sent', t: r, reminder: '1d', want: { reminder: '1d' } },
    { name: 'none is sent', t: r, reminder: 'none', want: { reminder: 'none' } },
    { name: 'a task without one counts as 1h', t: old, reminder: '1h', want: null },
    { name: 'a task without one, changed', t: old, reminder: '15m', want: { reminder: '15m' } },
  ];
  for (const c of reminderCases) {
    it(`reminder: ${c.name}`, () => {
      expect(patchFromForm(c.t, { title: 'A', description: '', due: '2025-07-01T09:30', reminder: c.reminder }, T0)).toEqual({ ok: true, value: c.want });
    });
  }
  it('a task without a description and an empty field is unchanged', () => {
    const bare = task('2', 'Pending', '2025-07-01T07:30:00Z', { title: 'A' });
    expect(patchFromForm(bare, { title: 'A', description: '', due: '2025-07-01T09:30' }, T0)).toEqual({ ok: true, value: null });
  });
  it('a deadline is compared by the minute (the field has no seconds)', () => {
    const frac = task('3', 'Pending', '2025-07-01T07:30:00.400Z', { title: 'A' });
    expect(patchFromForm(frac, { title: 'A', description: '', due: '2025-07-01T09:30:00' }, T0)).toEqual({ ok: true, value: null });
  });
  it('a deadline typed with seconds is compared by the second', () => {
    const x = task('4', 'Pending', '2025-07-01T07:30:10Z', { title: 'A' });
    expect(patchFromForm(x, { title: 'A', description: '', due: '2025-07-01T09:30:10' }, T0)).toEqual({ ok: true, value: null });
    expect(patchFromForm(x, { title: 'A', description: '', due: '2025-07-01T09:30:28' }, T0)).toEqual({ ok: true, value: { dueAt: '2025-07-01T07:30:28Z' } });
    expect(patchFromForm(x, { title: 'A', description: '', due: '2025-07-01T09:30' }, T0)).toEqual({ ok: true, value: null });
  });
  it('rejects a blank title', () => {
    expect(patchFromForm(t, { title: '', description: '', due: '2025-07-01T09:30' }, T0)).toMatchObject({ ok: false, field: 'title' });
  });
});
