// @vitest-environment jsdom
import { act, cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CampaignApi } from '../campaignApi';
import type { Live } from '../campaignLive';
import type { CampaignJSON, LiveState, Progress, Send } from '../campaigns';
import { ApiError } from '../http';
import { CampaignsPage } from './Campaigns';

afterEach(cleanup);

const send = (i: number, state: Send['state']): Send => ({
  id: `c1-0000${i}`,
  index: i,
  email: `r${i}@example.com`,
  subject: 'Hello',
  state,
  sendAt: '2030-01-01T12:00:00Z',
  local: '2030-01-01T12:00:00',
});
const campaign = (states: Send['state'][], status = 'Active'): CampaignJSON => {
  const counts: Record<string, number> = {};
  for (const s of states) counts[s] = (counts[s] ?? 0) + 1;
  return { id: 'c1', status, subject: 'Hello', timeZone: 'UTC', total: states.length, createdAt: '', updatedAt: '', counts, sends: states.map((s, i) => send(i, s)) };
};

function api(get: () => CampaignJSON): CampaignApi & { gets: number } {
  const a = {
    gets: 0,
    list: () => Promise.resolve({ campaigns: [] }),
    preview: vi.fn(),
    create: vi.fn(),
    get: () => {
      a.gets++;
      return Promise.resolve(get());
    },
    provision: vi.fn(() => Promise.resolve(get())),
    cancel: vi.fn(() => Promise.resolve({ id: 'c1', status: 'Cancelled', cancelled: 1, done: true })),
  };
  return a as unknown as CampaignApi & { gets: number };
}

function page(a: CampaignApi, pollMs = 20, download?: (name: string, text: string) => void) {
  let handlers: { onProgress(p: Progress): void; onState(s: LiveState): void } | undefined;
  const openLive = (_id: string, h: typeof handlers): Live => {
    handlers = h;
    return { close: () => undefined };
  };
  render(
    <CampaignsPage
      api={a}
      config={{ apiUrl: '', live: { kind: 'sse' } }}
      getToken={() => Promise.resolve('t')}
      route={{ kind: 'campaign', id: 'c1' }}
      announce={() => undefined}
      onUnauthorized={() => undefined}
      openLive={openLive}
      pollMs={pollMs}
      {...(download ? { download } : {})}
    />,
  );
  return { live: () => handlers! };
}

describe('new campaign form', () => {
  it('says what to fix, previews the plan, and opens the created campaign', async () => {
    const a = api(() => campaign(['Pending']));
    (a.preview as ReturnType<typeof vi.fn>).mockResolvedValue({ total: 2, first: '2030-01-01T09:00:00', last: '2030-01-01T09:30:00', days: 1, sends: [send(0, 'Pending'), send(1, 'Pending')] });
    (a.create as ReturnType<typeof vi.fn>).mockResolvedValue({ ...campaign(['Pending', 'Pending']), id: 'c9' });
    render(
      <CampaignsPage api={a} config={{ apiUrl: '', live: { kind: 'sse' } }} getToken={() => Promise.resolve('t')} route={{ kind: 'list' }} announce={() => undefined} onUnauthorized={() => undefined} />,
    );
    await screen.findByText('No campaigns yet.');
    fireEvent.click(screen.getByRole('button', { name: 'Preview plan' }));
    const subject = screen.getByLabelText('Subject');
    expect(subject.getAttribute('aria-invalid')).toBe('true');
    expect(document.activeElement).toBe(subject);
    expect(a.preview).not.toHaveBeenCalled();
    fireEvent.change(subject, { target: { value: 'Hello' } });
    fireEvent.change(screen.getByLabelText('Email text'), { target: { value: 'Hi' } });
    fireEvent.change(screen.getByLabelText('Recipients'), { target: { value: 'a@example.com\nb@example.com' } });
    fireEvent.click(screen.getByRole('button', { name: 'Preview plan' }));
    expect((await screen.findByTestId('plan-summary')).textContent).toMatch(/^2 sends over 1 day: first 2030-01-01 09:00, last 2030-01-01 09:30/);
    const days = screen.getAllByTestId('plan-day');
    expect(days.map((d) => [d.getAttribute('data-day'), d.getAttribute('data-count')])).toEqual([['2030-01-01', '2']]);
    expect((a.preview as ReturnType<typeof vi.fn>).mock.calls[0]![0].recipients).toEqual([{ email: 'a@example.com' }, { email: 'b@example.com' }]);
    fireEvent.click(screen.getByRole('button', { name: 'Create campaign' }));
    await waitFor(() => expect(window.location.hash).toBe('#/campaigns/c9'));
    window.location.hash = '';
  });
});

describe('campaign page', () => {
  it('shows counts and sends, and applies live updates newer than the last', async () => {
    const a = api(() => campaign(['Pending', 'Pending']));
    const { live } = page(a, 60_000);
    await screen.findByText('r0@example.com');
    act(() => live().onState('live'));
    expect(screen.getByTestId('count-Pending').textContent).toBe('2');
    act(() => live().onProgress({ campaignId: 'c1', status: 'Active', asOf: '2030-01-01T12:00:02Z', counts: { Pending: 1, Finished: 1 }, sends: [send(0, 'Finished')] }));
    act(() => live().onProgress({ campaignId: 'c1', status: 'Active', asOf: '2030-01-01T12:00:01Z', counts: { Pending: 1, Running: 1 }, sends: [send(0, 'Running')] }));
    expect(screen.getByTestId('count-Finished').textContent).toBe('1');
    expect(screen.getByTestId('count-Running').textContent).toBe('0');
    expect(screen.getAllByTestId('send-row')[0]!.getAttribute('data-state')).toBe('Finished');
    expect(screen.getByTestId('live-state').textContent).toMatch(/Live updates are on/);
  });

  it('polls while the live channel is down and sends are active, and stops when they end', async () => {
    let states: Send['state'][] = ['Pending', 'Running'];
    const a = api(() => campaign(states));
    const { live } = page(a);
    await screen.findByText('r0@example.com');
    act(() => live().onState('down'));
    const before = a.gets;
    await waitFor(() => expect(a.gets).toBeGreaterThan(before + 1));
    states = ['Finished', 'Finished'];
    await waitFor(() => expect(screen.getByTestId('count-Finished').textContent).toBe('2'));
    const settled = a.gets;
    await new Promise((r) => setTimeout(r, 100));
    expect(a.gets).toBe(settled);
  });

  it('cancels', async () => {
    const a = api(() => campaign(['Finished', 'Pending']));
    page(a, 60_000);
    fireEvent.click(await screen.findByRole('button', { name: 'Cancel campaign' }));
    await waitFor(() => expect(a.cancel).toHaveBeenCalledWith('c1'));
  });
});

describe('campaign page at a glance', () => {
  const at = (i: number, state: Send['state'], sendAt: string, sentAt?: string): Send => ({ ...send(i, state), sendAt, ...(sentAt ? { sentAt } : {}) });
  const mixed = (): CampaignJSON => ({
    ...campaign([]),
    timeZone: 'Asia/Tokyo',
    total: 4,
    status: 'Active',
    counts: { Finished: 2, Cancelled: 1, Pending: 1 },
    sends: [
      at(0, 'Finished', '2030-01-01T14:00:00Z', '2030-01-01T14:00:20Z'),
      at(1, 'Finished', '2030-01-01T15:30:00Z', '2030-01-01T15:35:00Z'),
      at(2, 'Cancelled', '2030-01-02T01:00:00Z'),
      at(3, 'Pending', '2999-01-02T01:00:00Z'),
    ],
  });

  it('shows the progress bar, the plan per day in the campaign zone, and late sends', async () => {
    page(api(mixed), 60_000);
    const bar = await screen.findByRole('progressbar', { name: 'Campaign progress' });
    expect([bar.getAttribute('aria-valuenow'), bar.getAttribute('aria-valuemax')]).toEqual(['3', '4']);
    expect(bar.getAttribute('aria-valuetext')).toBe('3 of 4 sends ended: 2 finished, 1 cancelled, 1 pending');
    expect(screen.getByTestId('count-Finished').textContent).toBe('2');
    const days = screen.getAllByTestId('plan-day').map((d) => [d.getAttribute('data-day'), d.getAttribute('data-count')]);
    expect(days).toEqual([
      ['2030-01-01', '1'], // 23:00 in Tokyo
      ['2030-01-02', '2'],
      ['2999-01-02', '1'],
    ]);
    expect(screen.getAllByTestId('plan-day')[0]!.textContent).toContain('23:00 Asia/Tokyo · 14:00 UTC');
    const late = screen.getAllByTestId('send-row').filter((r) => r.getAttribute('data-late') === 'true');
    expect(late.map((r) => r.textContent)).toEqual([expect.stringContaining('5 min late')]);
    expect(screen.getByTestId('timeline-summary').textContent).toMatch(/^2 sent, 1 late \(worst 5 min\)/);
  });

  it('filters the sends by state and downloads the shown ones as CSV', async () => {
    const download = vi.fn();
    page(api(mixed), 60_000, download);
    await screen.findByText('r0@example.com');
    fireEvent.change(screen.getByLabelText('Show'), { target: { value: 'Finished' } });
    expect(screen.getAllByTestId('send-row').map((r) => r.getAttribute('data-state'))).toEqual(['Finished', 'Finished']);
    fireEvent.change(screen.getByLabelText('Show'), { target: { value: 'late' } });
    expect(screen.getAllByTestId('send-row')).toHaveLength(1);
    fireEvent.click(screen.getByRole('button', { name: 'Download late only as CSV' }));
    await waitFor(() => expect(download).toHaveBeenCalledTimes(1));
    const [name, text] = download.mock.calls[0]!;
    expect(name).toBe('campaign-c1-sends.csv');
    expect(text.split('\r\n').slice(1, -1)).toEqual(['1,r1@example.com,Hello,Finished,2030-01-01T15:30:00Z,2030-01-01T12:00:00,2030-01-01T15:35:00Z,300,,,']);
  });

  it('reads every page before the download', async () => {
    const download = vi.fn();
    const first = { ...campaign(['Finished', 'Finished', 'Finished']), sends: [send(0, 'Finished')], cursor: '1' };
    const rest = { ...campaign(['Finished', 'Finished', 'Finished']), sends: [send(1, 'Finished'), send(2, 'Finished')] };
    const a = api(() => first);
    a.get = vi.fn((_id: string, o?: { cursor?: string }) => Promise.resolve(o?.cursor ? rest : first));
    page(a, 60_000, download);
    fireEvent.click(await screen.findByRole('button', { name: 'Download CSV' }));
    await waitFor(() => expect(download).toHaveBeenCalledTimes(1));
    expect(download.mock.calls[0]![1].split('\r\n')).toHaveLength(5); // header, 3 sends, the final CRLF
    expect(screen.getAllByTestId('send-row')).toHaveLength(3);
  });
});

describe('a signed-in user who is not a campaign sender', () => {
  it('sees the API’s 403 message, stays signed in, and is refused again on create', async () => {
    const forbidden = new ApiError(403, 'forbidden', 'campaigns are for members of the "campaign-senders" user group: ask an administrator to add you, then sign in again');
    const a = { ...api(() => campaign([])), list: vi.fn(() => Promise.reject(forbidden)), create: vi.fn(() => Promise.reject(forbidden)) };
    const onUnauthorized = vi.fn();
    render(
      <CampaignsPage
        api={a as unknown as CampaignApi}
        config={{ apiUrl: '', live: { kind: 'sse' } }}
        getToken={() => Promise.resolve('t')}
        route={{ kind: 'list' }}
        announce={() => undefined}
        onUnauthorized={onUnauthorized}
      />,
    );
    await waitFor(() => expect(screen.getAllByRole('alert').some((el) => el.textContent === forbidden.message)).toBe(true));
    fireEvent.change(screen.getByLabelText('Subject'), { target: { value: 'Hello' } });
    fireEvent.change(screen.getByLabelText('Email text'), { target: { value: 'Hi' } });
    fireEvent.change(screen.getByLabelText('Recipients'), { target: { value: 'r0@example.com' } });
    fireEvent.click(screen.getByRole('button', { name: 'Create campaign' }));
    await waitFor(() => expect(a.create).toHaveBeenCalled());
    await waitFor(() => expect(screen.getAllByRole('alert').filter((el) => el.textContent === forbidden.message)).toHaveLength(2));
    expect(onUnauthorized).not.toHaveBeenCalled();
  });
});

describe('a suppressed send', () => {
  it('has ended: the bar counts it, the legend lists it, and the filter shows it', async () => {
    page(api(() => campaign(['Finished', 'Suppressed', 'Pending'])), 60_000);
    const bar = await screen.findByRole('progressbar', { name: 'Campaign progress' });
    expect(bar.getAttribute('aria-valuenow')).toBe('2');
    expect(bar.getAttribute('aria-valuetext')).toBe('2 of 3 sends ended: 1 finished, 1 suppressed, 1 pending');
    expect(screen.getByTestId('count-Suppressed').textContent).toBe('1');
    fireEvent.change(screen.getByLabelText('Show'), { target: { value: 'Suppressed' } });
    expect(screen.getAllByTestId('send-row').map((r) => r.textContent)).toEqual([expect.stringContaining('r1@example.com')]);
  });
});
