// The campaign page's rules, free of React and of the network: the JSON
// shapes of the campaign API (internal/campaigns/campaignapi), the progress
// reducer (a live update applies only when it is newer than the last one
// applied, and replaces send rows whole), the server-sent-events parser,
// when to fall back to polling, and the create form's checks.

/**
 * Every send state, as campaignapi.SendStates lists them. Suppressed is
 * terminal: the address is on the campaigns' suppression list (a bounce, a
 * complaint or an unsubscribe), so nothing was sent.
 */
export const STATES = ['Pending', 'Running', 'Finished', 'Failed', 'Cancelled', 'Suppressed'] as const;
export type SendState = (typeof STATES)[number];
export type Counts = Record<SendState, number>;

/** One send as the API shows it. */
export interface Send {
  id: string;
  index: number;
  email: string;
  subject: string;
  state: SendState;
  sendAt: string;
  /** The send time in the campaign's zone. */
  local: string;
  attempt?: number;
  sentAt?: string;
  error?: string;
  reason?: string;
}

/** GET /campaigns/{id} (and the create answer): the campaign, its counts and a page of sends. */
export interface CampaignJSON {
  id: string;
  status: string;
  subject: string;
  timeZone: string;
  total: number;
  createdAt: string;
  updatedAt: string;
  cancelReason?: string;
  counts?: Partial<Counts>;
  sends?: Send[];
  cursor?: string;
}

/** One campaign of GET /campaigns: what the owner index projects (no zone, counts or sends). */
export type CampaignSummary = Pick<CampaignJSON, 'id' | 'status' | 'subject' | 'total' | 'createdAt' | 'updatedAt'>;

/** One live update (campaignapi.Progress). */
export interface Progress {
  campaignId: string;
  status: string;
  asOf: string;
  counts: Partial<Counts>;
  sends: Send[];
}

/** POST /campaigns/preview. */
export interface Preview {
  total: number;
  first: string;
  last: string;
  days: number;
  sends: Send[];
}

/** What the campaign page shows. */
export interface CampaignView {
  id: string;
  status: string;
  subject: string;
  timeZone: string;
  total: number;
  cancelReason?: string;
  counts: Counts;
  /** The loaded sends, in index order. */
  sends: Send[];
  /** Reads the next page of sends; absent when every send is loaded. */
  cursor?: string;
  /** The asOf of the last live update applied, or null. */
  asOf: string | null;
}

export function normalizeCounts(c: Partial<Counts> | undefined): Counts {
  const out = {} as Counts;
  for (const s of STATES) out[s] = typeof c?.[s] === 'number' ? c[s] : 0;
  return out;
}

/** The view of a first page (GET /campaigns/{id}). */
export function viewOf(c: CampaignJSON): CampaignView {
  return {
    id: c.id,
    status: c.status,
    subject: c.subject,
    timeZone: c.timeZone,
    total: c.total,
    ...(c.cancelReason ? { cancelReason: c.cancelReason } : {}),
    counts: normalizeCounts(c.counts),
    sends: [...(c.sends ?? [])].sort((a, b) => a.index - b.index),
    ...(c.cursor ? { cursor: c.cursor } : {}),
    asOf: null,
  };
}

/**
 * Applies a page read from the API: the campaign and counts as read, and its
 * sends replacing the loaded rows of the same id (append adds the rows of a
 * next page). The last applied asOf is kept: a page is no live update.
 */
export function applyPage(v: CampaignView, c: CampaignJSON, append: boolean): CampaignView {
  const fresh = viewOf(c);
  if (append) {
    // A next page adds rows; the campaign and counts stay as live updates left them.
    const byId = new Map(v.sends.map((s) => [s.id, s]));
    for (const s of fresh.sends) if (!byId.has(s.id)) byId.set(s.id, s);
    const { cursor: _old, ...kept } = v;
    return { ...kept, sends: [...byId.values()].sort((a, b) => a.index - b.index), ...(fresh.cursor ? { cursor: fresh.cursor } : {}) };
  }
  const cursor = v.cursor ?? fresh.cursor;
  const { cursor: _drop, ...rest } = fresh;
  return { ...rest, sends: mergeRows(v.sends, fresh.sends), ...(cursor ? { cursor } : {}), asOf: v.asOf };
}

/**
 * The first page with the live updates that arrived while it was being read
 * applied over it, oldest first (the page may predate some of them; a later
 * update fixes any it predates the other way round).
 */
export function firstView(c: CampaignJSON, early: Progress[]): CampaignView {
  const sorted = [...early].sort((a, b) => compareAsOf(a.asOf, b.asOf));
  return sorted.reduce(applyProgress, viewOf(c));
}

/** Rows of `loaded` replaced whole by those of `fresh` with the same id, plus fresh rows not loaded yet. */
function mergeRows(loaded: Send[], fresh: Send[]): Send[] {
  if (loaded.length === 0) return fresh;
  const byId = new Map(loaded.map((s) => [s.id, s]));
  for (const s of fresh) byId.set(s.id, s);
  return [...byId.values()].sort((a, b) => a.index - b.index);
}

/**
 * Orders two RFC 3339 UTC instants with up to nanosecond fractions (Go's
 * RFC3339Nano drops trailing zeros, so the strings do not sort as text):
 * negative when a is earlier, 0 when equal, positive when later.
 */
export function compareAsOf(a: string, b: string): number {
  const key = (s: string): string | null => {
    const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z$/.exec(s);
    return m ? `${m[1]}.${(m[2] ?? '').padEnd(9, '0')}` : null;
  };
  const ka = key(a);
  const kb = key(b);
  if (ka !== null && kb !== null) return ka < kb ? -1 : ka > kb ? 1 : 0;
  return (Date.parse(a) || 0) - (Date.parse(b) || 0);
}

/**
 * Applies one live update: only when it is about this campaign and newer
 * than the last one applied (delivery is at least once and may be out of
 * order). Its counts and status replace the view's; each send it carries
 * replaces the loaded row of the same id whole (rows not loaded yet are read
 * with their page). Returns the same object when nothing applies.
 */
export function applyProgress(v: CampaignView, p: Progress): CampaignView {
  if (p.campaignId !== v.id) return v;
  if (v.asOf !== null && compareAsOf(p.asOf, v.asOf) <= 0) return v;
  const changed = new Map(p.sends.map((s) => [s.id, s]));
  const sends = v.sends.map((s) => changed.get(s.id) ?? s);
  return { ...v, status: p.status, counts: normalizeCounts(p.counts), sends, asOf: p.asOf };
}

/** Sends that may still change: Pending or Running. */
export function activeSends(c: Counts): number {
  return c.Pending + c.Running;
}

export type LiveState = 'off' | 'connecting' | 'live' | 'down';

/**
 * Whether the page polls GET /campaigns/{id}: only as the fallback of the
 * live channel (off, or not up), and only while sends may still change (a
 * Draft has not been provisioned: nothing moves until its owner does it).
 */
export function shouldPoll(live: LiveState, status: string, counts: Counts): boolean {
  return live !== 'live' && status !== 'Draft' && activeSends(counts) > 0;
}

/** How often the fallback polls. */
export const POLL_MS = 5000;

/**
 * Server-sent events (text/event-stream), fed chunk by chunk: returns the
 * data of each event completed by the chunk. Comments (":" lines) and
 * fields other than data are ignored; several data lines join with "\n";
 * "\r\n", "\r" and "\n" all end a line.
 * https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation
 */
export class SseParser {
  private buf = '';
  private data: string[] = [];
  private pendingCR = false;

  feed(chunk: string): string[] {
    let text = chunk;
    if (this.pendingCR && text.startsWith('\n')) text = text.slice(1); // the LF of a CRLF split across chunks
    this.pendingCR = text.endsWith('\r');
    this.buf += text;
    const out: string[] = [];
    const lines = this.buf.split(/\r\n|\r|\n/);
    this.buf = lines.pop() ?? '';
    for (const line of lines) {
      if (line === '') {
        if (this.data.length > 0) out.push(this.data.join('\n'));
        this.data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') this.data.push(value);
    }
    return out;
  }
}

/** Reads a Progress from an event's data; null when it is not one. */
export function parseProgress(data: string): Progress | null {
  let v: unknown;
  try {
    v = JSON.parse(data);
  } catch {
    return null;
  }
  if (!v || typeof v !== 'object') return null;
  const p = v as Record<string, unknown>;
  if (typeof p.campaignId !== 'string' || typeof p.asOf !== 'string' || typeof p.status !== 'string') return null;
  return {
    campaignId: p.campaignId,
    status: p.status,
    asOf: p.asOf,
    counts: (p.counts && typeof p.counts === 'object' ? p.counts : {}) as Partial<Counts>,
    sends: Array.isArray(p.sends) ? (p.sends as Send[]) : [],
  };
}

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** The create form as typed. */
export interface CampaignForm {
  subject: string;
  body: string;
  /** One address per line. */
  recipients: string;
  sendsPerDay: string;
  weekdays: Weekday[];
  /** Windows such as "09:00-12:00", separated by commas or lines. */
  windows: string;
  timeZone: string;
  /** YYYY-MM-DD */
  startDate: string;
}

/** The body of POST /campaigns and /campaigns/preview. */
export interface CreateBody {
  subject: string;
  body: string;
  recipients: { email: string }[];
  schedule: { sendsPerDay?: number; weekdays: Weekday[]; windows: string[]; timeZone: string; startDate: string };
}

export type FormErrors = Partial<Record<keyof CampaignForm, string>>;

/**
 * Checks the form and builds the request body, or says what to fix per
 * field. The server checks everything again (addresses, windows, zone).
 */
export function buildCreateBody(f: CampaignForm): { body: CreateBody } | { errors: FormErrors } {
  const errors: FormErrors = {};
  const recipients = f.recipients
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const windows = f.windows
    .split(/[\n,]/)
    .map((w) => w.trim())
    .filter((w) => w !== '');
  if (f.subject.trim() === '') errors.subject = 'Enter a subject.';
  if (f.body.trim() === '') errors.body = 'Enter the email text.';
  if (recipients.length === 0) errors.recipients = 'Enter at least one email address, one per line.';
  const perDay = f.sendsPerDay.trim() === '' ? undefined : Number(f.sendsPerDay);
  if (perDay !== undefined && (!Number.isInteger(perDay) || perDay < 1 || perDay > 1440)) {
    errors.sendsPerDay = 'Sends per day must be a whole number from 1 to 1440.';
  }
  if (f.weekdays.length === 0) errors.weekdays = 'Pick at least one weekday.';
  if (windows.length === 0) errors.windows = 'Enter at least one window, such as 09:00-12:00.';
  else {
    const bad = windows.find((w) => !/^\d\d:\d\d-\d\d:\d\d$/.test(w));
    if (bad) errors.windows = `Window "${bad}" must be HH:MM-HH:MM, such as 09:00-12:00.`;
  }
  if (f.timeZone.trim() === '') errors.timeZone = 'Enter a time zone, such as Europe/Berlin.';
  if (!/^\d{4}-\d\d-\d\d$/.test(f.startDate)) errors.startDate = 'Pick the first day to send.';
  if (Object.keys(errors).length > 0) return { errors };
  return {
    body: {
      subject: f.subject.trim(),
      body: f.body,
      recipients: recipients.map((email) => ({ email })),
      schedule: {
        ...(perDay !== undefined ? { sendsPerDay: perDay } : {}),
        weekdays: WEEKDAYS.filter((d) => f.weekdays.includes(d)),
        windows,
        timeZone: f.timeZone.trim(),
        startDate: f.startDate,
      },
    },
  };
}

/** The campaign page a hash names: "#/campaigns" (list) or "#/campaigns/<id>"; null for any other hash. */
export function campaignRoute(hash: string): { kind: 'list' } | { kind: 'campaign'; id: string } | null {
  const m = /^#\/campaigns(?:\/([A-Za-z0-9_-]+))?\/?$/.exec(hash);
  if (!m) return null;
  return m[1] ? { kind: 'campaign', id: m[1] } : { kind: 'list' };
}

/** The sub claim of a JWT (the campaign channel's owner segment); null when unreadable. */
export function tokenSub(token: string): string | null {
  const part = token.replace(/^Bearer\s+/i, '').split('.')[1];
  if (!part) return null;
  try {
    const json = atob(part.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(part.length / 4) * 4, '='));
    const sub = (JSON.parse(json) as { sub?: unknown }).sub;
    return typeof sub === 'string' && sub !== '' ? sub : null;
  } catch {
    return null;
  }
}

/** campaignapi.ProgressChannel: /campaigns/<owner sub>/<campaign id>. */
export function progressChannel(owner: string, id: string): string {
  return `/campaigns/${owner}/${id}`;
}
