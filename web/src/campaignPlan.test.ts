import { describe, expect, it } from 'vitest';
import { displayZone, formatDay, formatLocal, formatSpan, planDays, wallTime } from './campaignPlan';

describe('wallTime', () => {
  const cases: [string, string, string, string][] = [
    // instant, zone, date, time
    ['2030-01-01T00:00:00Z', 'UTC', '2030-01-01', '00:00:00'],
    ['2030-01-01T23:30:00Z', 'Europe/Berlin', '2030-01-02', '00:30:00'], // midnight is 00, never 24
    ['2030-07-01T23:30:00Z', 'Europe/Berlin', '2030-07-02', '01:30:00'], // summer time: +2
    ['2030-01-01T03:00:00Z', 'America/New_York', '2029-12-31', '22:00:00'],
    ['2030-01-01T10:00:00Z', 'Pacific/Kiritimati', '2030-01-02', '00:00:00'], // +14
    ['2030-01-01T12:00:00Z', 'Asia/Kolkata', '2030-01-01', '17:30:00'], // half hour
    ['2030-01-01T12:00:00Z', 'Asia/Kathmandu', '2030-01-01', '17:45:00'], // quarter hour
    ['2030-03-31T00:59:59Z', 'Europe/Berlin', '2030-03-31', '01:59:59'], // just before the spring gap
    ['2030-03-31T01:00:00Z', 'Europe/Berlin', '2030-03-31', '03:00:00'], // just after it
  ];
  for (const [at, zone, date, time] of cases) {
    it(`${at} in ${zone}`, () => expect(wallTime(Date.parse(at), zone)).toEqual({ date, time }));
  }
});

describe('planDays', () => {
  const at = (...xs: string[]) => xs.map((sendAt) => ({ sendAt }));
  const cases: { name: string; sends: { sendAt: string }[]; zone: string; want: [string, number][] }[] = [
    { name: 'none', sends: [], zone: 'UTC', want: [] },
    { name: 'one day in UTC', sends: at('2030-01-01T09:00:00Z', '2030-01-01T09:01:00Z'), zone: 'UTC', want: [['2030-01-01', 2]] },
    {
      name: 'a UTC evening is the next day in Tokyo',
      sends: at('2030-01-01T14:00:00Z', '2030-01-01T15:30:00Z', '2030-01-02T01:00:00Z'),
      zone: 'Asia/Tokyo',
      want: [
        ['2030-01-01', 1],
        ['2030-01-02', 2],
      ],
    },
    {
      name: 'out of order input, days in order, unparseable left out',
      sends: at('2030-01-03T12:00:00Z', 'soon', '2030-01-01T12:00:00Z', '2030-01-03T13:00:00Z'),
      zone: 'UTC',
      want: [
        ['2030-01-01', 1],
        ['2030-01-03', 2],
      ],
    },
    {
      name: 'the autumn DST day (25 hours) is one day',
      sends: at('2030-10-26T22:30:00Z', '2030-10-27T00:30:00Z', '2030-10-27T01:30:00Z', '2030-10-27T22:59:00Z', '2030-10-27T23:00:00Z'),
      zone: 'Europe/Berlin',
      want: [
        ['2030-10-27', 4],
        ['2030-10-28', 1],
      ],
    },
  ];
  for (const c of cases) {
    it(c.name, () => expect(planDays(c.sends, c.zone).map((d) => [d.day, d.count])).toEqual(c.want));
  }

  it('gives each day its first and last send in the zone and in UTC', () => {
    const [d] = planDays(at('2030-01-01T23:30:00Z', '2030-01-01T23:05:00Z', '2030-01-02T03:00:00Z'), 'Europe/Berlin');
    expect(d).toEqual({
      day: '2030-01-02',
      count: 3,
      first: { date: '2030-01-02', time: '00:05:00' },
      last: { date: '2030-01-02', time: '04:00:00' },
      firstUtc: { date: '2030-01-01', time: '23:05:00' },
      lastUtc: { date: '2030-01-02', time: '03:00:00' },
    });
    expect(formatSpan(d!.first, d!.last, d!.day)).toBe('00:05–04:00');
    expect(formatSpan(d!.firstUtc, d!.lastUtc, d!.day)).toBe('1 Jan 23:05–2 Jan 03:00');
  });
});

describe('formatting', () => {
  const cases: [string, string, string][] = [
    ['formatDay', formatDay('2026-03-03'), 'Tue, 3 Mar 2026'],
    ['formatSpan one time', formatSpan({ date: '2030-01-01', time: '09:00:00' }, { date: '2030-01-01', time: '09:00:59' }, '2030-01-01'), '09:00'],
    ['formatLocal', formatLocal('2030-01-01T12:00:00'), '2030-01-01 12:00'],
    ['formatLocal keeps odd text', formatLocal('soon'), 'soon'],
    ['displayZone known', displayZone('Europe/Berlin'), 'Europe/Berlin'],
    ['displayZone unknown', displayZone('Mars/Olympus'), 'UTC'],
    ['displayZone empty', displayZone(''), 'UTC'],
  ];
  for (const [name, got, want] of cases) it(name, () => expect(got).toBe(want));
});
