import { describe, expect, it } from 'vitest';
import {
  applyPage,
  applyProgress,
  buildCreateBody,
  type CampaignForm,
  type CampaignJSON,
  type CampaignView,
  campaignRoute,
  compareAsOf,
  type Counts,
  firstView,
  type LiveState,
  normalizeCounts,
  type Progress,
  parseProgress,
  type Send,
  SseParser,
  shouldPoll,
  tokenSub,
  viewOf,
} from './campaigns';

const send = (i: number, state: Send['state'] = 'Pending'): Send => ({
  id: `c1-0000${i}`,
  index: i,
  email: `r${i}@example.com`,
  subject: 'Hello',
  state,
  sendAt: `2030-01-01T12:0${i}:00Z`,
  local: `2030-01-01T12:0${i}:00`,
});

const base: CampaignJSON = {
  id: 'c1',
  status: 'Active',
  subject: 'Hello',
  timeZone: 'UTC',
  total: 3,
  createdAt: '2030-01-01T12:00:00Z',
  updatedAt: '2030-01-01T12:00:00Z',
  counts: { Pending: 3 },
  sends: [send(2), send(0), send(1)],
};

const progress = (asOf: string, counts: Partial<Counts>, sends: Send[], status = 'Active'): Progress => ({ campaignId: 'c1', status, asOf, counts, sends });

describe('compareAsOf', () => {
  const cases: [string, string, number][] = [
    ['2030-01-01T12:00:00Z', '2030-01-01T12:00:00.5Z', -1],
    ['2030-01-01T12:00:00.5Z', '2030-01-01T12:00:00.123456789Z', 1], // RFC3339Nano trims zeros: text order is wrong
    ['2030-01-01T12:00:00.1Z', '2030-01-01T12:00:00.100Z', 0],
    ['2030-01-01T12:00:00.000000002Z', '2030-01-01T12:00:00.000000001Z', 1],
    ['2030-01-02T00:00:00Z', '2030-01-01T23:59:59.999999999Z', 1],
  ];
  for (const [a, b, want] of cases) {
    it(`${a} vs ${b}`, () => expect(Math.sign(compareAsOf(a, b))).toBe(want));
  }
});

describe('applyProgress', () => {
  const start = viewOf(base);
  it('sorts the first page by index', () => expect(start.sends.map((s) => s.index)).toEqual([0, 1, 2]));

  const cases: { name: string; updates: Progress[]; counts: Partial<Counts>; states: Send['state'][]; asOf: string | null; status?: string }[] = [
    {
      name: 'in order: counts and rows move',
      updates: [progress('2030-01-01T12:00:01Z', { Pending: 2, Running: 1 }, [send(0, 'Running')]), progress('2030-01-01T12:00:02Z', { Pending: 2, Finished: 1 }, [send(0, 'Finished')])],
      counts: { Pending: 2, Finished: 1 },
      states: ['Finished', 'Pending', 'Pending'],
      asOf: '2030-01-01T12:00:02Z',
    },
    {
      name: 'an older update after a newer one is dropped',
      updates: [progress('2030-01-01T12:00:02Z', { Pending: 2, Finished: 1 }, [send(0, 'Finished')]), progress('2030-01-01T12:00:01Z', { Pending: 2, Running: 1 }, [send(0, 'Running')])],
      counts: { Pending: 2, Finished: 1 },
      states: ['Finished', 'Pending', 'Pending'],
      asOf: '2030-01-01T12:00:02Z',
    },
    {
      name: 'a duplicate applies once',
      updates: [
        progress('2030-01-01T12:00:01.5Z', { Pending: 2, Finished: 1 }, [send(1, 'Finished')]),
        progress('2030-01-01T12:00:01.5Z', { Pending: 9 }, [send(1, 'Pending')]),
      ],
      counts: { Pending: 2, Finished: 1 },
      states: ['Pending', 'Finished', 'Pending'],
      asOf: '2030-01-01T12:00:01.5Z',
    },
    {
      name: "another campaign's update is ignored",
      updates: [{ ...progress('2030-01-01T12:00:09Z', { Cancelled: 3 }, [send(0, 'Cancelled')]), campaignId: 'c2' }],
      counts: { Pending: 3 },
      states: ['Pending', 'Pending', 'Pending'],
      asOf: null,
    },
    {
      name: 'a send not loaded is not added; counts still move',
      updates: [progress('2030-01-01T12:00:01Z', { Pending: 2, Finished: 1 }, [{ ...send(7, 'Finished'), id: 'c1-00007' }])],
      counts: { Pending: 2, Finished: 1 },
      states: ['Pending', 'Pending', 'Pending'],
      asOf: '2030-01-01T12:00:01Z',
    },
    {
      name: 'a cancel: status and counts, rows replaced whole',
      updates: [progress('2030-01-01T12:00:03Z', { Finished: 1, Cancelled: 2 }, [{ ...send(1, 'Cancelled'), reason: 'campaign cancelled' }, send(2, 'Cancelled')], 'Cancelled')],
      counts: { Finished: 1, Cancelled: 2 },
      states: ['Pending', 'Cancelled', 'Cancelled'],
      asOf: '2030-01-01T12:00:03Z',
      status: 'Cancelled',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      let v: CampaignView = start;
      for (const u of c.updates) v = applyProgress(v, u);
      expect(v.counts).toEqual(normalizeCounts(c.counts));
      expect(v.sends.map((s) => s.state)).toEqual(c.states);
      expect(v.asOf).toBe(c.asOf);
      if (c.status) expect(v.status).toBe(c.status);
    });
  }
  it('returns the same view when nothing applies', () => {
    const v = applyProgress(start, progress('2030-01-01T12:00:01Z', {}, []));
    expect(applyProgress(v, progress('2030-01-01T12:00:01Z', { Pending: 1 }, []))).toBe(v);
  });
  it('a polled page keeps the last asOf and replaces rows', () => {
    const v = applyProgress(start, progress('2030-01-01T12:00:05Z', { Pending: 2, Running: 1 }, [send(0, 'Running')]));
    const polled = applyPage(v, { ...base, counts: { Pending: 2, Finished: 1 }, sends: [send(0, 'Finished')] }, false);
    expect(polled.asOf).toBe('2030-01-01T12:00:05Z');
    expect(polled.sends.map((s) => s.state)).toEqual(['Finished', 'Pending', 'Pending']);
    expect(polled.counts.Finished).toBe(1);
  });
  it('updates that came before the first page apply over it, oldest first', () => {
    const v = firstView(base, [
      progress('2030-01-01T12:00:02Z', { Pending: 2, Finished: 1 }, [send(0, 'Finished')]),
      progress('2030-01-01T12:00:01Z', { Pending: 2, Running: 1 }, [send(0, 'Running')]),
    ]);
    expect(v.sends[0]!.state).toBe('Finished');
    expect(v.counts.Finished).toBe(1);
    expect(v.asOf).toBe('2030-01-01T12:00:02Z');
  });
  it('a next page keeps the live status and counts', () => {
    const live = applyProgress(viewOf({ ...base, total: 4, cursor: '3' }), progress('2030-01-01T12:00:05Z', { Pending: 3, Finished: 1 }, [send(0, 'Finished')], 'Active'));
    const next = applyPage(live, { ...base, status: 'Provisioning', total: 4, counts: { Pending: 4 }, sends: [send(0), { ...send(3), id: 'c1-00003' }] }, true);
    expect(next.status).toBe('Active');
    expect(next.counts.Finished).toBe(1);
    expect(next.sends.map((s) => s.state)).toEqual(['Finished', 'Pending', 'Pending', 'Pending']);
  });
  it('a next page appends and moves the cursor', () => {
    const v = viewOf({ ...base, total: 4, cursor: '3' });
    const next = applyPage(v, { ...base, total: 4, sends: [{ ...send(3), id: 'c1-00003' }] }, true);
    expect(next.sends.map((s) => s.index)).toEqual([0, 1, 2, 3]);
    expect(next.cursor).toBeUndefined();
  });
});

describe('shouldPoll', () => {
  const counts = (c: Partial<Counts>) => normalizeCounts(c);
  const cases: [LiveState, string, Partial<Counts>, boolean][] = [
    ['live', 'Active', { Pending: 3 }, false],
    ['down', 'Active', { Pending: 3 }, true],
    ['connecting', 'Active', { Running: 1 }, true],
    ['off', 'Provisioning', { Pending: 1 }, true],
    ['down', 'Active', { Finished: 3 }, false],
    ['down', 'Cancelled', { Finished: 1, Cancelled: 2 }, false],
    ['down', 'Cancelled', { Running: 1, Cancelled: 2 }, true],
    ['down', 'Draft', { Pending: 3 }, false],
  ];
  for (const [live, status, c, want] of cases) {
    it(`${live} ${status} ${JSON.stringify(c)} → ${want}`, () => expect(shouldPoll(live, status, counts(c))).toBe(want));
  }
});

describe('SseParser', () => {
  const cases: { name: string; chunks: string[]; events: string[] }[] = [
    { name: 'one event', chunks: ['data: {"a":1}\n\n'], events: ['{"a":1}'] },
    { name: 'comments and keep-alives are skipped', chunks: [': subscribed\n\n', ': keep-alive\n\ndata: x\n\n'], events: ['x'] },
    { name: 'split across chunks', chunks: ['da', 'ta: {"a"', ':1}\n', '\n'], events: ['{"a":1}'] },
    { name: 'CRLF, also split between CR and LF', chunks: ['data: a\r', '\n\r\n'], events: ['a'] },
    { name: 'several data lines join', chunks: ['data: a\ndata: b\n\n'], events: ['a\nb'] },
    { name: 'no space after the colon; other fields ignored', chunks: ['event: progress\nid: 7\ndata:x\n\n'], events: ['x'] },
    { name: 'an unfinished event waits', chunks: ['data: a\n'], events: [] },
    { name: 'two events in one chunk', chunks: ['data: 1\n\ndata: 2\n\n'], events: ['1', '2'] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const p = new SseParser();
      expect(c.chunks.flatMap((ch) => p.feed(ch))).toEqual(c.events);
    });
  }
});

describe('parseProgress', () => {
  it('reads a Progress', () => {
    expect(parseProgress('{"campaignId":"c1","status":"Active","asOf":"2030-01-01T12:00:00Z","counts":{"Pending":1},"sends":[]}')).toEqual({
      campaignId: 'c1',
      status: 'Active',
      asOf: '2030-01-01T12:00:00Z',
      counts: { Pending: 1 },
      sends: [],
    });
  });
  for (const bad of ['', 'nope', '[]', '{"campaignId":"c1"}', 'null']) {
    it(`refuses ${JSON.stringify(bad)}`, () => expect(parseProgress(bad)).toBeNull());
  }
});

describe('buildCreateBody', () => {
  const ok: CampaignForm = {
    subject: ' Hello ',
    body: 'Hi',
    recipients: 'a@example.com\n\n  b@example.com  \r\n',
    sendsPerDay: '5',
    weekdays: ['fri', 'mon'],
    windows: '09:00-12:00, 13:00-17:00',
    timeZone: 'Europe/Berlin',
    startDate: '2030-01-01',
  };
  it('builds the request body', () => {
    expect(buildCreateBody(ok)).toEqual({
      body: {
        subject: 'Hello',
        body: 'Hi',
        recipients: [{ email: 'a@example.com' }, { email: 'b@example.com' }],
        schedule: { sendsPerDay: 5, weekdays: ['mon', 'fri'], windows: ['09:00-12:00', '13:00-17:00'], timeZone: 'Europe/Berlin', startDate: '2030-01-01' },
      },
    });
  });
  const bad: [Partial<CampaignForm>, keyof CampaignForm][] = [
    [{ subject: ' ' }, 'subject'],
    [{ recipients: '\n \n' }, 'recipients'],
    [{ sendsPerDay: '0' }, 'sendsPerDay'],
    [{ sendsPerDay: '2.5' }, 'sendsPerDay'],
    [{ weekdays: [] }, 'weekdays'],
    [{ windows: '9-12' }, 'windows'],
    [{ timeZone: '' }, 'timeZone'],
    [{ startDate: '' }, 'startDate'],
  ];
  for (const [change, field] of bad) {
    it(`says what to fix in ${field} for ${JSON.stringify(change)}`, () => {
      const r = buildCreateBody({ ...ok, ...change });
      expect('errors' in r && r.errors[field]).toBeTruthy();
    });
  }
});

describe('campaignRoute and tokenSub', () => {
  const routes: [string, ReturnType<typeof campaignRoute>][] = [
    ['#/campaigns', { kind: 'list' }],
    ['#/campaigns/', { kind: 'list' }],
    ['#/campaigns/c1a_b-2', { kind: 'campaign', id: 'c1a_b-2' }],
    ['#/tasks/t1', null],
    ['', null],
    ['#/campaigns/a/b', null],
  ];
  for (const [hash, want] of routes) it(`route ${JSON.stringify(hash)}`, () => expect(campaignRoute(hash)).toEqual(want));
  const jwt = (payload: object) => `h.${btoa(JSON.stringify(payload)).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_')}.s`;
  it('reads the sub of a JWT', () => expect(tokenSub(jwt({ sub: 'u-1', email: 'ä@x.io' }))).toBe('u-1'));
  it('accepts Bearer', () => expect(tokenSub(`Bearer ${jwt({ sub: 'u-2' })}`)).toBe('u-2'));
  for (const bad of ['', 'abc', 'a.!!!.c', jwt({ email: 'x' })]) it(`no sub in ${JSON.stringify(bad)}`, () => expect(tokenSub(bad)).toBeNull());
});
