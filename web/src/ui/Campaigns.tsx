import { type FormEvent, useCallback, useEffect, useId, useRef, useState } from 'react';
import type { TokenSource } from '../api';
import type { CampaignApi } from '../campaignApi';
import { type Live, openAppSync, openSse } from '../campaignLive';
import {
  activeSends,
  applyPage,
  applyProgress,
  buildCreateBody,
  firstView,
  type CampaignForm,
  type CampaignSummary,
  type CampaignView,
  type FormErrors,
  type LiveState,
  POLL_MS,
  type Preview,
  type Progress,
  shouldPoll,
  viewOf,
  WEEKDAYS,
  type Weekday,
} from '../campaigns';
import { formatLocal } from '../campaignPlan';
import { filterSends, type SendFilter } from '../campaignProgress';
import type { CampaignsConfig } from '../config';
import { csvFileName, sendsCsv } from '../csv';
import { downloadText } from '../download';
import { ApiError, joinUrl, userMessage } from '../http';
import { browserTimeZone } from '../timezone';
import { PlanChart, ProgressBar } from './CampaignCharts';
import { CampaignSends } from './CampaignSends';
import { useMounted, useNow } from './hooks';

interface Props {
  api: CampaignApi;
  config: CampaignsConfig;
  getToken: TokenSource;
  route: { kind: 'list' } | { kind: 'campaign'; id: string };
  announce: (text: string) => void;
  onUnauthorized: () => void;
  /** Starts a file download; tests replace it. Default: a Blob behind an <a download>. */
  download?: (name: string, text: string) => void;
  /** Opens the live channel; tests replace it. Default: SSE or AppSync Events per config. */
  openLive?: (id: string, handlers: { onProgress(p: Progress): void; onState(s: LiveState): void }) => Live;
  pollMs?: number;
}

const DAY_NAMES: Record<Weekday, string> = { mon: 'Monday', tue: 'Tuesday', wed: 'Wednesday', thu: 'Thursday', fri: 'Friday', sat: 'Saturday', sun: 'Sunday' };

/** The campaign pages: #/campaigns (create, list) and #/campaigns/<id> (one campaign, live). */
export function CampaignsPage(props: Props) {
  return props.route.kind === 'list' ? <CampaignList {...props} /> : <CampaignDetail key={props.route.id} {...props} id={props.route.id} />;
}

function today(zone: string): string {
  try {
    return new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
  } catch {
    return new Date().toISOString().slice(0, 10);
  }
}

function useErrorHandler(onUnauthorized: () => void) {
  return useCallback(
    (err: unknown, set: (m: string) => void) => {
      if (err instanceof ApiError && err.status === 401) onUnauthorized();
      else set(userMessage(err));
    },
    [onUnauthorized],
  );
}

function CampaignList({ api, announce, onUnauthorized }: Props) {
  const mounted = useMounted();
  const fail = useErrorHandler(onUnauthorized);
  const zone = browserTimeZone() ?? 'UTC';
  const [form, setForm] = useState<CampaignForm>({
    subject: '',
    body: '',
    recipients: '',
    sendsPerDay: '20',
    weekdays: ['mon', 'tue', 'wed', 'thu', 'fri'],
    windows: '09:00-12:00, 13:00-17:00',
    timeZone: zone,
    startDate: today(zone),
  });
  const [errors, setErrors] = useState<FormErrors>({});
  const [formError, setFormError] = useState('');
  const [busy, setBusy] = useState(false);
  // The plan with the zone it was asked for (the answer does not repeat it).
  const [preview, setPreview] = useState<(Preview & { timeZone: string }) | null>(null);
  const [campaigns, setCampaigns] = useState<CampaignSummary[] | null>(null);
  const [listError, setListError] = useState('');
  const id = useId();

  useEffect(() => {
    api.list().then(
      (r) => mounted.current && setCampaigns(r.campaigns),
      (err: unknown) => mounted.current && fail(err, setListError),
    );
  }, [api, fail, mounted]);

  const set = <K extends keyof CampaignForm>(k: K, v: CampaignForm[K]) => {
    setForm((f) => ({ ...f, [k]: v }));
    setPreview(null);
  };

  async function submit(kind: 'preview' | 'create') {
    setFormError('');
    const built = buildCreateBody(form);
    if ('errors' in built) {
      setErrors(built.errors);
      const first = Object.keys(built.errors)[0];
      document.getElementById(`${id}-${first}`)?.focus();
      return;
    }
    setErrors({});
    setBusy(true);
    try {
      if (kind === 'preview') {
        const p = await api.preview(built.body);
        if (!mounted.current) return;
        setPreview({ ...p, timeZone: built.body.schedule.timeZone });
        announce(`Plan: ${p.total} sends over ${p.days} ${p.days === 1 ? 'day' : 'days'}, from ${formatLocal(p.first)} to ${formatLocal(p.last)}.`);
      } else {
        const c = await api.create(built.body);
        if (!mounted.current) return;
        announce(`Campaign created with ${c.total} sends.`);
        window.location.hash = `#/campaigns/${c.id}`;
      }
    } catch (err) {
      if (mounted.current) fail(err, setFormError);
    } finally {
      if (mounted.current) setBusy(false);
    }
  }

  const field = (k: keyof CampaignForm) => ({
    id: `${id}-${k}`,
    'aria-invalid': errors[k] ? true : undefined,
    'aria-describedby': errors[k] ? `${id}-${k}-error` : `${id}-${k}-hint`,
  });
  const err = (k: keyof CampaignForm) => (
    <p className="error" id={`${id}-${k}-error`}>
      {errors[k] ?? ''}
    </p>
  );

  return (
    <>
      <p>
        <a href="#/">← Tasks</a>
      </p>
      <section className="card" aria-labelledby={`${id}-new`}>
        <h2 id={`${id}-new`}>New campaign</h2>
        <form
          noValidate
          onSubmit={(e: FormEvent) => {
            e.preventDefault();
            void submit('create');
          }}
        >
          <div className="field">
            <label htmlFor={`${id}-subject`}>Subject</label>
            <input {...field('subject')} value={form.subject} onChange={(e) => set('subject', e.target.value)} />
            <span className="hint" id={`${id}-subject-hint`}>The email's subject line.</span>
            {err('subject')}
          </div>
          <div className="field">
            <label htmlFor={`${id}-body`}>Email text</label>
            <textarea {...field('body')} rows={4} value={form.body} onChange={(e) => set('body', e.target.value)} />
            <span className="hint" id={`${id}-body-hint`}>Plain text.</span>
            {err('body')}
          </div>
          <div className="field">
            <label htmlFor={`${id}-recipients`}>Recipients</label>
            <textarea {...field('recipients')} rows={5} value={form.recipients} onChange={(e) => set('recipients', e.target.value)} />
            <span className="hint" id={`${id}-recipients-hint`}>One email address per line.</span>
            {err('recipients')}
          </div>
          <div className="field">
            <label htmlFor={`${id}-sendsPerDay`}>Sends per day</label>
            <input {...field('sendsPerDay')} inputMode="numeric" value={form.sendsPerDay} onChange={(e) => set('sendsPerDay', e.target.value)} />
            <span className="hint" id={`${id}-sendsPerDay-hint`}>At most this many a day (1-1440; sends are at whole minutes).</span>
            {err('sendsPerDay')}
          </div>
          <fieldset className="field weekdays" aria-describedby={errors.weekdays ? `${id}-weekdays-error` : undefined}>
            <legend>Weekdays</legend>
            <div className="picks">
              {WEEKDAYS.map((d, i) => (
                <label key={d} className="check">
                  <input
                    type="checkbox"
                    id={i === 0 ? `${id}-weekdays` : undefined}
                    checked={form.weekdays.includes(d)}
                    onChange={(e) => set('weekdays', e.target.checked ? [...form.weekdays, d] : form.weekdays.filter((x) => x !== d))}
                  />
                  {DAY_NAMES[d]}
                </label>
              ))}
            </div>
            {err('weekdays')}
          </fieldset>
          <div className="field">
            <label htmlFor={`${id}-windows`}>Daily windows</label>
            <input {...field('windows')} value={form.windows} onChange={(e) => set('windows', e.target.value)} />
            <span className="hint" id={`${id}-windows-hint`}>HH:MM-HH:MM in the campaign's time zone, separated by commas.</span>
            {err('windows')}
          </div>
          <div className="field">
            <label htmlFor={`${id}-timeZone`}>Time zone</label>
            <input {...field('timeZone')} value={form.timeZone} onChange={(e) => set('timeZone', e.target.value)} autoComplete="off" />
            <span className="hint" id={`${id}-timeZone-hint`}>An IANA name, such as Europe/Berlin.</span>
            {err('timeZone')}
          </div>
          <div className="field">
            <label htmlFor={`${id}-startDate`}>Start date</label>
            <input {...field('startDate')} type="date" value={form.startDate} onChange={(e) => set('startDate', e.target.value)} />
            <span className="hint" id={`${id}-startDate-hint`}>The first day that may hold a send.</span>
            {err('startDate')}
          </div>
          <p className="error" role="alert">
            {formError}
          </p>
          <div className="actions">
            <button type="button" onClick={() => void submit('preview')} aria-busy={busy || undefined} disabled={busy}>
              Preview plan
            </button>
            <button type="submit" className="primary" aria-busy={busy || undefined} disabled={busy}>
              Create campaign
            </button>
          </div>
        </form>
        {preview ? (
          <section aria-labelledby={`${id}-plan`} className="plan">
            <h3 id={`${id}-plan`}>Plan</h3>
            <p data-testid="plan-summary">
              {preview.total} {preview.total === 1 ? 'send' : 'sends'} over {preview.days} {preview.days === 1 ? 'day' : 'days'}: first {formatLocal(preview.first)}, last{' '}
              {formatLocal(preview.last)} ({preview.timeZone}).
            </p>
            <PlanChart sends={preview.sends} timeZone={preview.timeZone} total={preview.total} />
          </section>
        ) : null}
      </section>
      <section className="card" aria-labelledby={`${id}-list`}>
        <h2 id={`${id}-list`}>Your campaigns</h2>
        <p className="error" role="alert">
          {listError}
        </p>
        {campaigns === null && !listError ? <p className="muted">Loading…</p> : null}
        {campaigns?.length === 0 ? <p className="muted">No campaigns yet.</p> : null}
        {campaigns && campaigns.length > 0 ? (
          <ul className="campaigns">
            {campaigns.map((c) => (
              <li key={c.id}>
                <a href={`#/campaigns/${c.id}`}>{c.subject}</a> <span className="muted">{c.status}, {c.total} sends</span>
              </li>
            ))}
          </ul>
        ) : null}
      </section>
    </>
  );
}

const PAGE = 100;

function liveText(live: LiveState, polling: boolean): string {
  if (live === 'live') return 'Live updates are on.';
  if (polling) return `Live updates are unavailable: checking every ${Math.round(POLL_MS / 1000)} seconds.`;
  if (live === 'connecting') return 'Connecting to live updates…';
  return 'Live updates are unavailable.';
}

function CampaignDetail({ api, config, getToken, id, announce, onUnauthorized, openLive, pollMs = POLL_MS, download = downloadText }: Props & { id: string }) {
  const mounted = useMounted();
  const fail = useErrorHandler(onUnauthorized);
  const [view, setView] = useState<CampaignView | null>(null);
  const [loadError, setLoadError] = useState('');
  const [actionError, setActionError] = useState('');
  const [busy, setBusy] = useState<'' | 'provision' | 'cancel' | 'more' | 'csv'>('');
  const [filter, setFilter] = useState<SendFilter>('all');
  const [live, setLive] = useState<LiveState>('off');
  const headingRef = useRef<HTMLHeadingElement>(null);
  const hid = useId();
  const announced = useRef(false);

  // Subscribe first, then read: an update between the read and the
  // subscription is not missed (an older one is dropped by asOf).
  useEffect(() => {
    // Updates that arrive before the first page are applied over it.
    const early: Progress[] = [];
    let pageRead = false;
    const handlers = {
      onProgress: (p: Progress) => {
        if (!pageRead) early.push(p);
        else setView((v) => (v ? applyProgress(v, p) : v));
      },
      onState: (s: LiveState) => setLive(s),
    };
    let sub: Live | null = null;
    if (openLive) sub = openLive(id, handlers);
    else if (config.live.kind === 'sse') sub = openSse({ url: joinUrl(config.apiUrl, `/campaigns/${encodeURIComponent(id)}/events`), getToken, handlers });
    else if (config.live.kind === 'appsync')
      sub = openAppSync({ httpHost: config.live.httpHost, realtimeHost: config.live.realtimeHost, campaignId: id, getToken, handlers });
    api.get(id, { limit: PAGE }).then(
      (c) => {
        if (!mounted.current) return;
        pageRead = true;
        setView(firstView(c, early));
      },
      (err: unknown) => mounted.current && fail(err, setLoadError),
    );
    return () => sub?.close();
  }, [api, config, getToken, id, openLive, fail, mounted]);

  // Overdue sends show without a new update: the clock ticks while sends may still change.
  const now = useNow(view !== null && activeSends(view.counts) > 0, 15_000);
  const shown = view !== null;
  useEffect(() => {
    if (shown) headingRef.current?.focus();
  }, [shown]);

  const polling = view !== null && shouldPoll(live, view.status, view.counts);
  const loaded = view?.sends.length ?? 0;
  useEffect(() => {
    if (!polling) return;
    const t = setInterval(() => {
      api.get(id, { limit: Math.min(500, Math.max(PAGE, loaded)) }).then(
        (c) => mounted.current && setView((v) => (v ? applyPage(v, c, false) : viewOf(c))),
        () => undefined, // the next tick tries again
      );
    }, pollMs);
    return () => clearInterval(t);
  }, [polling, api, id, loaded, pollMs, mounted]);

  // Say once when every send has ended.
  useEffect(() => {
    if (!view || view.status === 'Draft' || activeSends(view.counts) > 0 || announced.current) return;
    announced.current = true;
    announce(`Every send has ended: ${view.counts.Finished} finished, ${view.counts.Failed} failed, ${view.counts.Cancelled} cancelled, ${view.counts.Suppressed} suppressed.`);
  }, [view, announce]);

  async function act(kind: 'provision' | 'cancel') {
    setActionError('');
    setBusy(kind);
    try {
      if (kind === 'provision') {
        await api.provision(id);
        announce('Provisioning started: each send gets its schedule.');
      } else {
        const r = await api.cancel(id);
        announce(r.done ? `Campaign cancelled: ${r.cancelled} sends will not go out.` : 'Campaign cancelled; the remaining sends are being cancelled.');
      }
      // While live, the change arrives pushed: a page read now could be
      // older than an update already applied, and nothing newer would
      // come to fix it.
      if (live !== 'live') {
        const c = await api.get(id, { limit: Math.min(500, Math.max(PAGE, loaded)) });
        if (mounted.current) setView((v) => (v ? applyPage(v, c, false) : viewOf(c)));
      }
    } catch (err) {
      if (mounted.current) fail(err, setActionError);
    } finally {
      if (mounted.current) setBusy('');
    }
  }

  async function more() {
    if (!view?.cursor) return;
    setBusy('more');
    try {
      const c = await api.get(id, { cursor: view.cursor, limit: PAGE });
      if (mounted.current) setView((v) => (v ? applyPage(v, c, true) : v));
    } catch (err) {
      if (mounted.current) fail(err, setActionError);
    } finally {
      if (mounted.current) setBusy('');
    }
  }

  // Every page first, so the file holds every send the filter matches.
  async function downloadCsv() {
    if (!view) return;
    setActionError('');
    setBusy('csv');
    try {
      let v = view;
      while (v.cursor) {
        const c = await api.get(id, { cursor: v.cursor, limit: 500 });
        v = applyPage(v, c, true);
        if (mounted.current) setView((cur) => (cur ? applyPage(cur, c, true) : cur));
      }
      if (!mounted.current) return;
      const rows = filterSends(v.sends, filter, Date.now());
      download(csvFileName(id), sendsCsv(rows, v.timeZone));
      announce(`Downloaded ${rows.length} ${rows.length === 1 ? 'send' : 'sends'} as CSV.`);
    } catch (err) {
      if (mounted.current) fail(err, setActionError);
    } finally {
      if (mounted.current) setBusy('');
    }
  }

  if (!view) {
    return (
      <>
        <p>
          <a href="#/campaigns">← Campaigns</a>
        </p>
        {loadError ? (
          <p className="error" role="alert">
            {loadError}
          </p>
        ) : (
          <p className="muted">Loading…</p>
        )}
      </>
    );
  }
  const canCancel = view.status !== 'Cancelled' && activeSends(view.counts) > 0;
  return (
    <>
      <p>
        <a href="#/campaigns">← Campaigns</a>
      </p>
      <section className="card" aria-labelledby={`${hid}-h`}>
        <h2 id={`${hid}-h`} ref={headingRef} tabIndex={-1}>
          {view.subject}
        </h2>
        <p>
          Status: <strong data-testid="campaign-status">{view.status}</strong>
          {view.cancelReason ? <span className="muted"> ({view.cancelReason})</span> : null} · {view.total} sends · times in {view.timeZone}
        </p>
        <p className="muted" data-testid="live-state">
          {liveText(live, polling)}
        </p>
        <ProgressBar counts={view.counts} total={view.total} />
        <p className="error" role="alert">
          {actionError}
        </p>
        <div className="actions">
          {view.status === 'Draft' || view.status === 'Provisioning' ? (
            <button type="button" className="primary" onClick={() => void act('provision')} disabled={busy !== ''} aria-busy={busy === 'provision' || undefined}>
              Provision
            </button>
          ) : null}
          {canCancel ? (
            <button type="button" className="danger" onClick={() => void act('cancel')} disabled={busy !== ''} aria-busy={busy === 'cancel' || undefined}>
              Cancel campaign
            </button>
          ) : null}
        </div>
      </section>
      <section className="card" aria-labelledby={`${hid}-plan`}>
        <h2 id={`${hid}-plan`}>Plan</h2>
        <PlanChart sends={view.sends} timeZone={view.timeZone} total={view.total} />
      </section>
      <CampaignSends
        sends={view.sends}
        timeZone={view.timeZone}
        now={now}
        filter={filter}
        onFilter={setFilter}
        {...(view.cursor ? { onMore: () => void more() } : {})}
        onDownload={() => void downloadCsv()}
        busy={busy}
      />
    </>
  );
}
