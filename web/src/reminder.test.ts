import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_REMINDER,
  defaultFor,
  formatRemindAt,
  largestFuture,
  loadPreferred,
  type PrefStorage,
  type Reminder,
  REMINDER_STORAGE_KEY,
  REMINDERS,
  reminderField,
  reminderPast,
  remindAtMs,
  savePreferred,
} from './reminder';

const originalTZ = process.env.TZ;
beforeAll(() => {
  process.env.TZ = 'Europe/Berlin';
});
afterAll(() => {
  if (originalTZ === undefined) delete process.env.TZ;
  else process.env.TZ = originalTZ;
});

// 2026-11-30 14:50:00 in Berlin (CET, UTC+1).
const NOW = Date.parse('2026-11-30T13:50:00Z');
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

/** A Map-backed storage; `broken` throws like a blocked localStorage. */
function memory(initial: Record<string, string> = {}, broken = false): PrefStorage & { data: Map<string, string> } {
  const data = new Map(Object.entries(initial));
  return {
    data,
    getItem: (k) => {
      if (broken) throw new Error('SecurityError');
      return data.get(k) ?? null;
    },
    setItem: (k, v) => {
      if (broken) throw new Error('QuotaExceededError');
      data.set(k, v);
    },
  };
}

describe('REMINDERS', () => {
  it('offers none, 15 min, 1 h and 1 day before, in that order, with 1 h the default', () => {
    expect(REMINDERS.map((o) => [o.value, o.label, o.offsetMs])).toEqual([
      ['none', 'None', 0],
      ['15m', '15 minutes before', 15 * MIN],
      ['1h', '1 hour before', HOUR],
      ['1d', '1 day before', DAY],
    ]);
    expect(DEFAULT_REMINDER).toBe('1h');
  });
});

describe('remindAtMs and reminderPast', () => {
  const due = NOW + 30 * MIN;
  const cases: { r: Reminder; at: number | null; past: boolean }[] = [
    { r: 'none', at: null, past: false },
    { r: '15m', at: due - 15 * MIN, past: false },
    { r: '1h', at: due - HOUR, past: true },
    { r: '1d', at: due - DAY, past: true },
  ];
  for (const c of cases) {
    it(`${c.r} for a deadline in 30 min`, () => {
      expect(remindAtMs(due, c.r)).toBe(c.at);
      expect(reminderPast(due, c.r, NOW)).toBe(c.past);
    });
  }
  it('a reminder exactly at now is past (it would never be sent)', () => {
    expect(reminderPast(NOW + 15 * MIN, '15m', NOW)).toBe(true);
  });
});

describe('largestFuture and defaultFor', () => {
  const cases: { name: string; dueIn: number; preferred: Reminder; largest: Reminder; def: Reminder }[] = [
    { name: 'far deadline keeps the preferred', dueIn: 3 * DAY, preferred: '1h', largest: '1d', def: '1h' },
    { name: 'far deadline keeps a preferred none', dueIn: 3 * DAY, preferred: 'none', largest: '1d', def: 'none' },
    { name: 'in 2 h: 1 day before is past, 1 h is the largest', dueIn: 2 * HOUR, preferred: '1d', largest: '1h', def: '1h' },
    { name: 'in 30 min: 1 h before is past, falls back to 15 min', dueIn: 30 * MIN, preferred: '1h', largest: '15m', def: '15m' },
    { name: 'in 30 min: a smaller preferred stays', dueIn: 30 * MIN, preferred: '15m', largest: '15m', def: '15m' },
    { name: 'in 10 min: nothing is left, none', dueIn: 10 * MIN, preferred: '1h', largest: 'none', def: 'none' },
    { name: 'in exactly 1 h: 1 h before is now, so past', dueIn: HOUR, preferred: '1h', largest: '15m', def: '15m' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(largestFuture(NOW + c.dueIn, NOW)).toBe(c.largest);
      expect(defaultFor(c.preferred, NOW + c.dueIn, NOW)).toBe(c.def);
    });
  }
});

describe('the last choice is remembered', () => {
  const cases: { name: string; storage: PrefStorage | null; want: Reminder }[] = [
    { name: 'nothing stored: the default', storage: memory(), want: '1h' },
    { name: 'a stored choice', storage: memory({ [REMINDER_STORAGE_KEY]: '1d' }), want: '1d' },
    { name: 'a stored none', storage: memory({ [REMINDER_STORAGE_KEY]: 'none' }), want: 'none' },
    { name: 'junk stored: the default', storage: memory({ [REMINDER_STORAGE_KEY]: '2h' }), want: '1h' },
    { name: 'storage that throws: the default', storage: memory({}, true), want: '1h' },
    { name: 'no storage: the default', storage: null, want: '1h' },
  ];
  for (const c of cases) it(c.name, () => expect(loadPreferred(c.storage)).toBe(c.want));

  it('saves and loads back', () => {
    const s = memory();
    savePreferred('15m', s);
    expect(s.data.get(REMINDER_STORAGE_KEY)).toBe('15m');
    expect(loadPreferred(s)).toBe('15m');
  });
  it('a storage that throws on save is ignored', () => {
    expect(() => savePreferred('15m', memory({}, true))).not.toThrow();
  });
});

describe('reminderField', () => {
  // Datetime-local values in Berlin: NOW is 14:50 local.
  const in30min = '2026-11-30T15:20';
  const in10min = '2026-11-30T15:00';
  const in3days = '2026-12-03T14:50';
  const cases: { name: string; chosen: Reminder | null | undefined; preferred: Reminder; due: string; want: ReturnType<typeof reminderField> }[] = [
    { name: 'untouched, far: the preferred', chosen: undefined, preferred: '1h', due: in3days, want: { value: '1h', note: null, offer: null } },
    { name: 'untouched, remembered 1 day', chosen: null, preferred: '1d', due: in3days, want: { value: '1d', note: null, offer: null } },
    {
      name: 'untouched, preferred past: the largest in the future, said',
      chosen: null,
      preferred: '1h',
      due: in30min,
      want: { value: '15m', note: '1 hour before is already past, so 15 minutes before is chosen.', offer: null },
    },
    {
      name: 'untouched, everything past: none, said',
      chosen: null,
      preferred: '1h',
      due: in10min,
      want: { value: 'none', note: '1 hour before is already past — no reminder will be sent.', offer: null },
    },
    { name: 'untouched, preferred none: never a note', chosen: null, preferred: 'none', due: in10min, want: { value: 'none', note: null, offer: null } },
    {
      name: 'chosen past: kept, said, the largest in the future offered',
      chosen: '1h',
      preferred: '15m',
      due: in30min,
      want: { value: '1h', note: '1 hour before is already past — no reminder will be sent.', offer: '15m' },
    },
    {
      name: 'chosen past with nothing left to offer',
      chosen: '1d',
      preferred: '1h',
      due: in10min,
      want: { value: '1d', note: '1 day before is already past — no reminder will be sent.', offer: null },
    },
    { name: 'chosen in the future', chosen: '15m', preferred: '1h', due: in30min, want: { value: '15m', note: null, offer: null } },
    { name: 'chosen none', chosen: 'none', preferred: '1h', due: in10min, want: { value: 'none', note: null, offer: null } },
    { name: 'no deadline yet: no note', chosen: null, preferred: '1h', due: '', want: { value: '1h', note: null, offer: null } },
    { name: 'a past deadline: the due field has the error, not this one', chosen: '1h', preferred: '1h', due: '2026-11-30T14:00', want: { value: '1h', note: null, offer: null } },
  ];
  for (const c of cases) it(c.name, () => expect(reminderField(c.chosen, c.preferred, c.due, NOW)).toEqual(c.want));
});

describe('formatRemindAt', () => {
  const cases: { name: string; iso: string; want: string }[] = [
    { name: 'today: the local time only', iso: '2026-11-30T15:55:00Z', want: '16:55' },
    { name: 'another day: with the day', iso: '2026-12-01T08:00:00Z', want: 'Tue 1 Dec, 09:00' },
    { name: 'today in Berlin though tomorrow in UTC', iso: '2026-11-30T22:30:00Z', want: '23:30' },
    { name: 'invalid: empty', iso: 'nope', want: '' },
  ];
  for (const c of cases) it(c.name, () => expect(formatRemindAt(c.iso, NOW, 'en-GB')).toBe(c.want));
});
