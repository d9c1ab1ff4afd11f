// The campaign page at a glance, free of React: the progress bar's numbers
// (sends ended out of the total, one segment per state), each send's planned
// against actual time (lateness), and the sends filter.
import { type Counts, type Send, type SendState, STATES } from './campaigns';

/** States a send ends in: it will not change any more. */
export const ENDED_STATES: readonly SendState[] = ['Finished', 'Failed', 'Cancelled', 'Suppressed'];

/** The progress bar's order: ended states first, then those still moving. */
export const BAR_ORDER: readonly SendState[] = ['Finished', 'Failed', 'Cancelled', 'Suppressed', 'Running', 'Pending'];

export interface ProgressSummary {
  /** Sends ended: the bar's value. */
  ended: number;
  /** The bar's maximum: the campaign's total (or the counts' sum when it is larger). */
  max: number;
  /** One segment per state with a count, in BAR_ORDER; percents of max. */
  segments: { state: SendState; count: number; offset: number; percent: number }[];
  /** The bar's aria-valuetext. */
  text: string;
}

export function progressOf(counts: Counts, total: number): ProgressSummary {
  const sum = STATES.reduce((n, s) => n + counts[s], 0);
  const max = Math.max(total, sum);
  const ended = ENDED_STATES.reduce((n, s) => n + counts[s], 0);
  const segments: ProgressSummary['segments'] = [];
  let at = 0;
  for (const state of BAR_ORDER) {
    const count = counts[state];
    if (count <= 0 || max === 0) continue;
    const percent = (count / max) * 100;
    segments.push({ state, count, offset: at, percent });
    at += percent;
  }
  const parts = BAR_ORDER.filter((s) => counts[s] > 0).map((s) => `${counts[s]} ${s.toLowerCase()}`);
  const text = `${ended} of ${max} ${max === 1 ? 'send' : 'sends'} ended${parts.length ? `: ${parts.join(', ')}` : ''}`;
  return { ended, max, segments, text };
}

/**
 * How far past its planned time a send may go out and still count as on
 * time. EventBridge Scheduler invokes a one-time schedule within a minute of
 * its time (60 second precision, no flexible window):
 * https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html
 */
export const LATE_AFTER_S = 60;

/**
 * A send's planned against actual time:
 * - sent: Finished with its actual time; late when more than LATE_AFTER_S after the plan;
 * - overdue: Pending or Running more than LATE_AFTER_S past the plan (late so far);
 * - waiting: Pending or Running, not yet due;
 * - unsent: Failed, Cancelled or Suppressed, or Finished with no actual time read.
 */
export interface Timing {
  kind: 'sent' | 'overdue' | 'waiting' | 'unsent';
  /** Seconds after the plan (negative: early); null when unknown. */
  lateS: number | null;
  late: boolean;
}

export function timingOf(s: Pick<Send, 'state' | 'sendAt' | 'sentAt'>, nowMs: number): Timing {
  const planned = Date.parse(s.sendAt);
  const unknown = Number.isNaN(planned);
  if (s.state === 'Finished') {
    const actual = s.sentAt ? Date.parse(s.sentAt) : Number.NaN;
    if (unknown || Number.isNaN(actual)) return { kind: 'unsent', lateS: null, late: false };
    const lateS = Math.round((actual - planned) / 1000);
    return { kind: 'sent', lateS, late: lateS > LATE_AFTER_S };
  }
  if ((s.state === 'Pending' || s.state === 'Running') && !unknown) {
    const lateS = Math.floor((nowMs - planned) / 1000);
    return lateS > LATE_AFTER_S ? { kind: 'overdue', lateS, late: true } : { kind: 'waiting', lateS: null, late: false };
  }
  return { kind: 'unsent', lateS: null, late: false };
}

/** "41 s", "3 min 5 s", "2 h 4 min", "1 d 3 h" for a number of seconds (>= 0). */
export function formatDuration(seconds: number): string {
  const s = Math.abs(Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return s % 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s / 60} min`;
  if (s < 86400) return `${Math.floor(s / 3600)} h${s % 3600 >= 60 ? ` ${Math.floor((s % 3600) / 60)} min` : ''}`;
  return `${Math.floor(s / 86400)} d${s % 86400 >= 3600 ? ` ${Math.floor((s % 86400) / 3600)} h` : ''}`;
}

/** The lateness a send row shows: "on time", "41 s early", "3 min 5 s late", "overdue by 2 min"; '' when there is none. */
export function latenessText(t: Timing): string {
  if (t.lateS === null) return '';
  if (t.kind === 'overdue') return `overdue by ${formatDuration(t.lateS)}`;
  if (t.late) return `${formatDuration(t.lateS)} late`;
  if (t.lateS < 0) return `on time (${formatDuration(t.lateS)} early)`;
  return t.lateS === 0 ? 'on time' : `on time (${formatDuration(t.lateS)} after)`;
}

/** How the sends went against their plan, for the timeline's summary. */
export interface TimelineSummary {
  sent: number;
  late: number;
  overdue: number;
  /** The largest lateness among late or overdue sends, in seconds; 0 when none. */
  worstS: number;
}

export function timelineOf(sends: readonly Send[], nowMs: number): TimelineSummary {
  const out: TimelineSummary = { sent: 0, late: 0, overdue: 0, worstS: 0 };
  for (const s of sends) {
    const t = timingOf(s, nowMs);
    if (t.kind === 'sent') out.sent++;
    if (t.kind === 'sent' && t.late) out.late++;
    if (t.kind === 'overdue') out.overdue++;
    if (t.late && t.lateS !== null) out.worstS = Math.max(out.worstS, t.lateS);
  }
  return out;
}

/** What the sends list shows: every send, one state, or only those late (sent late or overdue). */
export type SendFilter = 'all' | 'late' | SendState;

export const SEND_FILTERS: readonly SendFilter[] = ['all', ...STATES, 'late'];

export function isSendFilter(v: string): v is SendFilter {
  return (SEND_FILTERS as readonly string[]).includes(v);
}

export function filterSends(sends: readonly Send[], f: SendFilter, nowMs: number): Send[] {
  if (f === 'all') return [...sends];
  if (f === 'late') return sends.filter((s) => timingOf(s, nowMs).late);
  return sends.filter((s) => s.state === f);
}
