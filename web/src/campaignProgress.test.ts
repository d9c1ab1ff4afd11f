import { describe, expect, it } from 'vitest';
import { filterSends, formatDuration, isSendFilter, latenessText, progressOf, timelineOf, type Timing, timingOf } from './campaignProgress';
import { type Counts, normalizeCounts, type Send } from './campaigns';

describe('progressOf', () => {
  const cases: { name: string; counts: Partial<Counts>; total: number; ended: number; max: number; segments: [string, number, number][]; text: string }[] = [
    { name: 'nothing yet', counts: {}, total: 0, ended: 0, max: 0, segments: [], text: '0 of 0 sends ended' },
    { name: 'all pending', counts: { Pending: 4 }, total: 4, ended: 0, max: 4, segments: [['Pending', 0, 100]], text: '0 of 4 sends ended: 4 pending' },
    {
      name: 'mixed, ended first',
      counts: { Pending: 1, Running: 1, Finished: 4, Failed: 1, Cancelled: 1 },
      total: 8,
      ended: 6,
      max: 8,
      segments: [
        ['Finished', 0, 50],
        ['Failed', 50, 12.5],
        ['Cancelled', 62.5, 12.5],
        ['Running', 75, 12.5],
        ['Pending', 87.5, 12.5],
      ],
      text: '6 of 8 sends ended: 4 finished, 1 failed, 1 cancelled, 1 running, 1 pending',
    },
    {
      name: 'suppressed sends have ended, after cancelled',
      counts: { Pending: 1, Finished: 1, Cancelled: 1, Suppressed: 1 },
      total: 4,
      ended: 3,
      max: 4,
      segments: [
        ['Finished', 0, 25],
        ['Cancelled', 25, 25],
        ['Suppressed', 50, 25],
        ['Pending', 75, 25],
      ],
      text: '3 of 4 sends ended: 1 finished, 1 cancelled, 1 suppressed, 1 pending',
    },
    { name: 'one send', counts: { Finished: 1 }, total: 1, ended: 1, max: 1, segments: [['Finished', 0, 100]], text: '1 of 1 send ended: 1 finished' },
    // Counts read before the total caught up never overflow the bar.
    { name: 'counts above total', counts: { Finished: 3 }, total: 2, ended: 3, max: 3, segments: [['Finished', 0, 100]], text: '3 of 3 sends ended: 3 finished' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const p = progressOf(normalizeCounts(c.counts), c.total);
      expect([p.ended, p.max, p.text]).toEqual([c.ended, c.max, c.text]);
      expect(p.segments.map((s) => [s.state, s.offset, s.percent])).toEqual(c.segments);
    });
  }
});

describe('timingOf', () => {
  const now = Date.parse('2030-01-01T12:10:00Z');
  const at = '2030-01-01T12:00:00Z';
  const cases: { name: string; s: Pick<Send, 'state' | 'sendAt' | 'sentAt'>; want: Timing; text: string }[] = [
    { name: 'sent on the second', s: { state: 'Finished', sendAt: at, sentAt: at }, want: { kind: 'sent', lateS: 0, late: false }, text: 'on time' },
    { name: 'sent 41 s after', s: { state: 'Finished', sendAt: at, sentAt: '2030-01-01T12:00:41Z' }, want: { kind: 'sent', lateS: 41, late: false }, text: 'on time (41 s after)' },
    { name: 'sent at the limit', s: { state: 'Finished', sendAt: at, sentAt: '2030-01-01T12:01:00Z' }, want: { kind: 'sent', lateS: 60, late: false }, text: 'on time (1 min after)' },
    { name: 'sent 61 s after', s: { state: 'Finished', sendAt: at, sentAt: '2030-01-01T12:01:01Z' }, want: { kind: 'sent', lateS: 61, late: true }, text: '1 min 1 s late' },
    { name: 'sent early', s: { state: 'Finished', sendAt: at, sentAt: '2030-01-01T11:59:48Z' }, want: { kind: 'sent', lateS: -12, late: false }, text: 'on time (12 s early)' },
    { name: 'finished, no actual time', s: { state: 'Finished', sendAt: at }, want: { kind: 'unsent', lateS: null, late: false }, text: '' },
    { name: 'pending, past due', s: { state: 'Pending', sendAt: at }, want: { kind: 'overdue', lateS: 600, late: true }, text: 'overdue by 10 min' },
    { name: 'running, just due', s: { state: 'Running', sendAt: '2030-01-01T12:09:30Z' }, want: { kind: 'waiting', lateS: null, late: false }, text: '' },
    { name: 'pending, ahead', s: { state: 'Pending', sendAt: '2030-01-02T12:00:00Z' }, want: { kind: 'waiting', lateS: null, late: false }, text: '' },
    { name: 'cancelled', s: { state: 'Cancelled', sendAt: at }, want: { kind: 'unsent', lateS: null, late: false }, text: '' },
    { name: 'suppressed', s: { state: 'Suppressed', sendAt: at }, want: { kind: 'unsent', lateS: null, late: false }, text: '' },
    { name: 'failed', s: { state: 'Failed', sendAt: at }, want: { kind: 'unsent', lateS: null, late: false }, text: '' },
    { name: 'unparseable plan', s: { state: 'Pending', sendAt: 'soon' }, want: { kind: 'unsent', lateS: null, late: false }, text: '' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const t = timingOf(c.s, now);
      expect(t).toEqual(c.want);
      expect(latenessText(t)).toBe(c.text);
    });
  }
});

describe('formatDuration', () => {
  const cases: [number, string][] = [
    [0, '0 s'],
    [59, '59 s'],
    [60, '1 min'],
    [185, '3 min 5 s'],
    [3600, '1 h'],
    [3661, '1 h 1 min'],
    [90000, '1 d 1 h'],
    [-12, '12 s'],
  ];
  for (const [s, want] of cases) it(`${s}`, () => expect(formatDuration(s)).toBe(want));
});

describe('filters and the timeline summary', () => {
  const now = Date.parse('2030-01-01T12:10:00Z');
  const mk = (i: number, state: Send['state'], sentAt?: string): Send => ({
    id: `s${i}`,
    index: i,
    email: `r${i}@example.com`,
    subject: 'Hi',
    state,
    sendAt: '2030-01-01T12:00:00Z',
    local: '2030-01-01T12:00:00',
    ...(sentAt ? { sentAt } : {}),
  });
  const sends = [mk(0, 'Finished', '2030-01-01T12:00:20Z'), mk(1, 'Finished', '2030-01-01T12:05:00Z'), mk(2, 'Pending'), mk(3, 'Cancelled'), mk(4, 'Suppressed')];
  const cases: [Parameters<typeof filterSends>[1], string[]][] = [
    ['all', ['s0', 's1', 's2', 's3', 's4']],
    ['Suppressed', ['s4']],
    ['Finished', ['s0', 's1']],
    ['Pending', ['s2']],
    ['Failed', []],
    ['late', ['s1', 's2']],
  ];
  for (const [f, want] of cases) it(f, () => expect(filterSends(sends, f, now).map((s) => s.id)).toEqual(want));

  it('sums the timeline', () => expect(timelineOf(sends, now)).toEqual({ sent: 2, late: 1, overdue: 1, worstS: 600 }));
});

describe('every send state', () => {
  it('is a filter, and a count that defaults to 0', () => {
    expect(isSendFilter('Suppressed')).toBe(true);
    expect(normalizeCounts({ Suppressed: 2 })).toEqual({ Pending: 0, Running: 0, Finished: 0, Failed: 0, Cancelled: 0, Suppressed: 2 });
  });
});
