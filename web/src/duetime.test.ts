import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dueApiError, dueError, dueLimits, formatAgo, quickPicks, recreateDue } from './duetime';
import { ApiError } from './http';

const originalTZ = process.env.TZ;
beforeAll(() => {
  process.env.TZ = 'Europe/Berlin';
});
afterAll(() => {
  if (originalTZ === undefined) delete process.env.TZ;
  else process.env.TZ = originalTZ;
});

// 2026-11-30 14:50:27 in Berlin (CET, UTC+1).
const NOW = Date.parse('2026-11-30T13:50:27Z');

describe('quickPicks', () => {
  it('offers in 1 h, today 18:00, tomorrow 09:00 and next week, in local time without seconds', () => {
    expect(quickPicks(new Date(NOW))).toEqual([
      { label: 'In 1 hour', value: '2026-11-30T15:50' },
      { label: 'Today 18:00', value: '2026-11-30T18:00' },
      { label: 'Tomorrow 09:00', value: '2026-12-01T09:00' },
      { label: 'Next week', value: '2026-12-07T14:50' },
    ]);
  });
  it('leaves out today 18:00 once it is too close or past', () => {
    const labels = quickPicks(new Date('2026-11-30T16:50:00Z')).map((p) => p.label);
    expect(labels).toEqual(['In 1 hour', 'Tomorrow 09:00', 'Next week']);
  });
  it('crosses a DST change by the wall clock', () => {
    // Sat 28 Mar 2026 10:00 CET; next week is Sat 4 Apr 10:00 CEST.
    const p = quickPicks(new Date('2026-03-28T09:00:00Z'));
    expect(p.at(-1)).toEqual({ label: 'Next week', value: '2026-04-04T10:00' });
  });
});

describe('dueLimits', () => {
  it('is the next minute to a year ahead, in local time', () => {
    expect(dueLimits(new Date(NOW))).toEqual({ min: '2026-11-30T14:51', max: '2027-11-30T14:50' });
  });
});

describe('dueError', () => {
  const cases: [string, string, RegExp | null][] = [
    ['empty', '', /^Choose when the task is due\.$/],
    ['not a date', '2026-02-30T10:00', /valid due date/],
    ['in the past, said in local time', '2026-11-30T14:00', /future: it is already .*14:50/],
    ['more than a year ahead', '2027-12-01T10:00', /within a year/],
    ['fine', '2026-11-30T15:00', null],
  ];
  for (const [name, v, want] of cases) {
    it(name, () => {
      const got = dueError(v, NOW, 'en-GB');
      if (want === null) expect(got).toBeNull();
      else expect(got).toMatch(want);
      expect(got ?? '').not.toMatch(/Z\b|UTC|dueAt/);
    });
  }
});

describe('dueApiError', () => {
  it('rewrites the API text in local time, with no UTC timestamp', () => {
    const got = dueApiError(new ApiError(400, 'invalid_request', 'dueAt 2026-11-30T14:50:27Z is not in the future'), NOW, 'en-GB');
    expect(got).toMatch(/^Choose a time in the future: it is already .*14:50\.$/);
    expect(got).not.toMatch(/2026-11-30T|Z\b/);
  });
  it('leaves other errors alone', () => {
    expect(dueApiError(new ApiError(400, 'invalid_request', 'title is required'), NOW)).toBeNull();
    expect(dueApiError(new Error('x'), NOW)).toBeNull();
  });
});

describe('formatAgo', () => {
  const cases: [number, string][] = [
    [20, 'expired just now'],
    [3 * 60 + 5, 'expired 3 min ago'],
    [2 * 3600, 'expired 2 h ago'],
    [86400, 'expired 1 day ago'],
    [3 * 86400, 'expired 3 days ago'],
  ];
  for (const [secs, want] of cases) it(want, () => expect(formatAgo(new Date(NOW - secs * 1000).toISOString(), NOW)).toBe(want));
});

describe('recreateDue', () => {
  it('keeps the original lead time', () => {
    expect(recreateDue('2026-11-29T10:00:00Z', '2026-11-29T12:00:00Z', NOW)).toBe('2026-11-30T16:50');
  });
  it('uses at least an hour', () => {
    expect(recreateDue('2026-11-29T10:00:00Z', '2026-11-29T10:00:06Z', NOW)).toBe('2026-11-30T15:50');
  });
});
