// The campaign's sends as a timeline: each send's planned time (in the
// campaign's zone and UTC) against its actual one, late ones marked; a
// filter by state (or late only) and a CSV download. Thin over
// campaignProgress.ts.
import { useId } from 'react';
import { displayZone, wallTime } from '../campaignPlan';
import { filterSends, formatDuration, isSendFilter, LATE_AFTER_S, latenessText, SEND_FILTERS, type SendFilter, timelineOf, timingOf } from '../campaignProgress';
import type { Send } from '../campaigns';

interface Props {
  sends: readonly Send[];
  timeZone: string;
  now: number;
  filter: SendFilter;
  onFilter: (f: SendFilter) => void;
  /** Reads the next page; absent when every send is loaded. */
  onMore?: () => void;
  onDownload: () => void;
  /** What the page is busy with ('' when idle): buttons wait for it. */
  busy: string;
}

function filterLabel(f: SendFilter): string {
  if (f === 'all') return 'All states';
  if (f === 'late') return 'Late only';
  return f;
}

/** "2030-01-01 13:00:00 (12:00:00 UTC)" in zone; "… UTC" alone when zone is UTC. */
function zonedTime(iso: string | undefined, zone: string): string {
  if (!iso) return '';
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  const utc = wallTime(ms, 'UTC');
  if (zone === 'UTC') return `${utc.date} ${utc.time} UTC`;
  const local = wallTime(ms, zone);
  return `${local.date} ${local.time} (${utc.time} UTC)`;
}

export function CampaignSends({ sends, timeZone, now, filter, onFilter, onMore, onDownload, busy }: Props) {
  const id = useId();
  const zone = displayZone(timeZone);
  const shown = filterSends(sends, filter, now);
  const t = timelineOf(sends, now);
  const countOf = (f: SendFilter) => filterSends(sends, f, now).length;
  return (
    <section className="card" aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>Sends</h2>
      <p data-testid="timeline-summary" className={t.late + t.overdue > 0 ? 'timeline-summary has-late' : 'timeline-summary'}>
        {t.sent} sent
        {t.late > 0 ? `, ${t.late} late` : t.sent > 0 ? ', all on time' : ''}
        {t.overdue > 0 ? `, ${t.overdue} overdue` : ''}
        {t.worstS > 0 ? ` (worst ${formatDuration(t.worstS)})` : ''}. Late means more than {LATE_AFTER_S} s after the planned time.
      </p>
      <div className="sends-tools">
        <div className="sends-filter">
          <label htmlFor={`${id}-filter`}>Show</label>
          <select id={`${id}-filter`} value={filter} onChange={(e) => isSendFilter(e.target.value) && onFilter(e.target.value)}>
            {SEND_FILTERS.map((f) => (
              <option key={f} value={f}>
                {filterLabel(f)} ({countOf(f)})
              </option>
            ))}
          </select>
        </div>
        <button type="button" onClick={onDownload} disabled={busy !== ''} aria-busy={busy === 'csv' || undefined}>
          {filter === 'all' ? 'Download CSV' : `Download ${filterLabel(filter).toLowerCase()} as CSV`}
        </button>
      </div>
      <p className="muted" aria-live="polite" data-testid="sends-shown">
        {filter === 'all' ? '' : `Showing ${shown.length} of ${sends.length} loaded sends.`}
      </p>
      <ol className="sends" data-testid="sends">
        {shown.map((s) => {
          const timing = timingOf(s, now);
          const late = latenessText(timing);
          return (
            <li key={s.id} className={`send send-${s.state.toLowerCase()}${timing.late ? ' send-late' : ''}`} data-testid="send-row" data-state={s.state} data-late={timing.late || undefined}>
              <span className="send-email">{s.email}</span>
              <span className={`status state-${s.state.toLowerCase()}`}>{s.state}</span>
              {timing.late ? <span className="status late-badge">Late</span> : null}
              <dl className="send-times">
                <div>
                  <dt>Planned</dt>
                  <dd>{zonedTime(s.sendAt, zone)}</dd>
                </div>
                {s.sentAt ? (
                  <div>
                    <dt>Sent</dt>
                    <dd>{zonedTime(s.sentAt, zone)}</dd>
                  </div>
                ) : null}
                {late ? (
                  <div>
                    <dt>Lateness</dt>
                    <dd data-testid="send-lateness">{late}</dd>
                  </div>
                ) : null}
              </dl>
              {s.error || s.reason ? <span className="muted send-why">{s.error ?? s.reason}</span> : null}
            </li>
          );
        })}
      </ol>
      {onMore ? (
        <button type="button" onClick={onMore} disabled={busy !== ''} aria-busy={busy === 'more' || undefined}>
          Show more sends
        </button>
      ) : null}
    </section>
  );
}
