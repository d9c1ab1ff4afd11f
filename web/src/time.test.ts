import { afterAll, describe, expect, it } from 'vitest';
import { formatTimeLeft, localInputToUtc, toRfc3339Utc, utcToLocalInput } from './time';

// Node re-reads TZ whenever process.env.TZ is assigned, so each case below runs
// in the zone it names. The original zone is restored for the other files.
const originalTZ = process.env.TZ;
afterAll(() => {
  if (originalTZ === undefined) delete process.env.TZ;
  else process.env.TZ = originalTZ;
});

function inZone<T>(tz: string, fn: () => T): T {
  process.env.TZ = tz;
  return fn();
}

describe('localInputToUtc', () => {
  const cases: { name: string; tz: string; input: string; want: string | null }[] = [
    { name: 'UTC is unchanged', tz: 'UTC', input: '2025-06-01T12:30', want: '2025-06-01T12:30:00Z' },
    { name: 'seconds are kept', tz: 'UTC', input: '2025-06-01T12:30:45', want: '2025-06-01T12:30:45Z' },
    { name: 'fractions of a second are dropped', tz: 'UTC', input: '2025-06-01T12:30:45.987', want: '2025-06-01T12:30:45Z' },
    { name: 'summer time in Berlin is UTC+2', tz: 'Europe/Berlin', input: '2025-07-15T09:00', want: '2025-07-15T07:00:00Z' },
    { name: 'winter time in Berlin is UTC+1', tz: 'Europe/Berlin', input: '2025-01-15T09:00', want: '2025-01-15T08:00:00Z' },
    { name: 'half-hour offset in Kolkata', tz: 'Asia/Kolkata', input: '2025-01-01T00:15', want: '2024-12-31T18:45:00Z' },
    { name: 'negative offset crosses into the next UTC day', tz: 'America/Los_Angeles', input: '2025-12-31T20:00', want: '2026-01-01T04:00:00Z' },
    // America/New_York: clocks go 02:00 EST -> 03:00 EDT on 2025-03-09.
    { name: 'New York, last minute before the spring gap', tz: 'America/New_York', input: '2025-03-09T01:59', want: '2025-03-09T06:59:00Z' },
    { name: 'New York, a time inside the spring gap moves forward an hour', tz: 'America/New_York', input: '2025-03-09T02:30', want: '2025-03-09T07:30:00Z' },
    { name: 'New York, first minute after the spring gap', tz: 'America/New_York', input: '2025-03-09T03:00', want: '2025-03-09T07:00:00Z' },
    // America/New_York: clocks go 02:00 EDT -> 01:00 EST on 2025-11-02, so 01:30 happens twice.
    { name: 'New York, a repeated time in the fall means the first one (EDT)', tz: 'America/New_York', input: '2025-11-02T01:30', want: '2025-11-02T05:30:00Z' },
    { name: 'New York, after the fall change is EST', tz: 'America/New_York', input: '2025-11-02T02:30', want: '2025-11-02T07:30:00Z' },
    // Australia/Sydney is in the southern hemisphere: DST ends in April, 03:00 AEDT -> 02:00 AEST.
    { name: 'Sydney, summer time (AEDT, UTC+11)', tz: 'Australia/Sydney', input: '2025-01-10T10:00', want: '2025-01-09T23:00:00Z' },
    { name: 'Sydney, winter time (AEST, UTC+10)', tz: 'Australia/Sydney', input: '2025-07-10T10:00', want: '2025-07-10T00:00:00Z' },
    { name: 'leap day', tz: 'UTC', input: '2024-02-29T08:00', want: '2024-02-29T08:00:00Z' },
    { name: 'empty value', tz: 'UTC', input: '', want: null },
    { name: 'not a date', tz: 'UTC', input: 'tomorrow', want: null },
    { name: 'date without a time', tz: 'UTC', input: '2025-06-01', want: null },
    { name: 'an offset is not a datetime-local value', tz: 'UTC', input: '2025-06-01T12:30Z', want: null },
    { name: 'February 30th does not exist', tz: 'UTC', input: '2025-02-30T08:00', want: null },
    { name: 'February 29th outside a leap year', tz: 'UTC', input: '2025-02-29T08:00', want: null },
    { name: 'hour 24 is out of range', tz: 'UTC', input: '2025-06-01T24:00', want: null },
    { name: 'month 13 is out of range', tz: 'UTC', input: '2025-13-01T10:00', want: null },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(inZone(c.tz, () => localInputToUtc(c.input))).toBe(c.want);
    });
  }
});

describe('utcToLocalInput', () => {
  const cases: { name: string; tz: string; input: string; want: string }[] = [
    { name: 'UTC', tz: 'UTC', input: '2025-06-01T12:30:00Z', want: '2025-06-01T12:30:00' },
    { name: 'Berlin summer', tz: 'Europe/Berlin', input: '2025-07-15T07:00:00Z', want: '2025-07-15T09:00:00' },
    { name: 'an offset in the input is honoured', tz: 'UTC', input: '2025-06-01T12:30:00+02:00', want: '2025-06-01T10:30:00' },
    { name: 'Kolkata crosses into the next local day', tz: 'Asia/Kolkata', input: '2024-12-31T18:45:00Z', want: '2025-01-01T00:15:00' },
    { name: 'New York, first 01:30 of the fall change (EDT)', tz: 'America/New_York', input: '2025-11-02T05:30:00Z', want: '2025-11-02T01:30:00' },
    { name: 'New York, second 01:30 of the fall change (EST)', tz: 'America/New_York', input: '2025-11-02T06:30:00Z', want: '2025-11-02T01:30:00' },
    { name: 'New York, the instant of the spring change', tz: 'America/New_York', input: '2025-03-09T07:00:00Z', want: '2025-03-09T03:00:00' },
    { name: 'fractional seconds are cut', tz: 'UTC', input: '2025-06-01T12:30:15.750Z', want: '2025-06-01T12:30:15' },
    { name: 'invalid instant gives an empty value', tz: 'UTC', input: 'soon', want: '' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(inZone(c.tz, () => utcToLocalInput(c.input))).toBe(c.want);
    });
  }

  const roundTrips: { tz: string; input: string }[] = [
    { tz: 'Europe/London', input: '2025-03-30T00:59:59' },
    { tz: 'Europe/London', input: '2025-10-26T03:00:00' },
    { tz: 'America/New_York', input: '2025-03-09T03:00:00' },
    { tz: 'Australia/Lord_Howe', input: '2025-04-06T03:00:00' },
    { tz: 'Pacific/Chatham', input: '2025-09-28T04:00:00' },
  ];
  for (const c of roundTrips) {
    it(`round-trips ${c.input} in ${c.tz}`, () => {
      inZone(c.tz, () => {
        const utc = localInputToUtc(c.input);
        expect(utc).not.toBeNull();
        expect(utcToLocalInput(utc!)).toBe(c.input);
      });
    });
  }
});

describe('toRfc3339Utc', () => {
  it('drops milliseconds and ends in Z', () => {
    expect(toRfc3339Utc(new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 678)))).toBe('2025-01-02T03:04:05Z');
  });
});

describe('formatTimeLeft', () => {
  const now = Date.parse('2025-06-01T12:00:00Z');
  const cases: { name: string; dueAt: string; want: string }[] = [
    { name: 'days and hours', dueAt: '2025-06-03T16:30:00Z', want: '2d 4h left' },
    { name: 'exactly one day', dueAt: '2025-06-02T12:00:00Z', want: '1d 0h left' },
    { name: 'hours and padded minutes', dueAt: '2025-06-01T15:05:00Z', want: '3h 05m left' },
    { name: 'minutes and padded seconds', dueAt: '2025-06-01T12:04:09Z', want: '4m 09s left' },
    { name: 'seconds only', dueAt: '2025-06-01T12:00:12Z', want: '12s left' },
    { name: 'a fraction of a second rounds up', dueAt: '2025-06-01T12:00:00.200Z', want: '1s left' },
    { name: 'the deadline itself', dueAt: '2025-06-01T12:00:00Z', want: 'Due now' },
    { name: 'past the deadline', dueAt: '2025-06-01T11:00:00Z', want: 'Due now' },
    { name: 'invalid due time', dueAt: 'whenever', want: '' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(formatTimeLeft(c.dueAt, now)).toBe(c.want);
    });
  }
});
