// The campaign page's pictures, thin over campaignProgress.ts and
// campaignPlan.ts: the progress bar with its legend of counts, and the plan
// per day (bars in plain SVG, sized by attributes: the page's
// Content-Security-Policy allows no inline style) with a table beside it.
import { useId } from 'react';
import { displayZone, formatDay, formatSpan, planDays } from '../campaignPlan';
import { progressOf } from '../campaignProgress';
import { type Counts, STATES } from '../campaigns';

/** Sends ended out of the total, one colour per state, and the counts per state as its legend. */
export function ProgressBar({ counts, total }: { counts: Counts; total: number }) {
  const p = progressOf(counts, total);
  return (
    <div className="progress">
      <p className="progress-text">
        <strong>{p.ended}</strong> of {p.max} {p.max === 1 ? 'send' : 'sends'} ended
      </p>
      <div
        role="progressbar"
        className="progress-bar"
        data-testid="campaign-progress"
        aria-label="Campaign progress"
        aria-valuemin={0}
        aria-valuemax={p.max}
        aria-valuenow={p.ended}
        aria-valuetext={p.text}
      >
        <svg width="100%" height="100%" aria-hidden="true" focusable="false">
          {p.segments.map((s) => (
            <rect key={s.state} className={`seg seg-${s.state.toLowerCase()}`} x={`${s.offset}%`} y="0" width={`${s.percent}%`} height="100%" />
          ))}
        </svg>
      </div>
      <dl className="counts" aria-label="Sends per state">
        {STATES.map((s) => (
          <div key={s} className={`count count-${s.toLowerCase()}`}>
            <dt>
              <svg className="swatch" width="12" height="12" aria-hidden="true" focusable="false">
                <rect className={`seg seg-${s.toLowerCase()}`} width="12" height="12" rx="2" />
              </svg>
              {s}
            </dt>
            <dd data-testid={`count-${s}`}>{counts[s]}</dd>
          </div>
        ))}
      </dl>
    </div>
  );
}

/** Days the chart draws; the table lists every day. */
const CHART_DAYS = 31;

/**
 * The planned sends per calendar day in the campaign's zone, each day with
 * its first and last send there and in UTC. `total` is the plan's size:
 * when the sends given are fewer (a preview lists the first 500, the page
 * loads a page at a time) the caption says so.
 */
export function PlanChart({ sends, timeZone, total }: { sends: readonly { sendAt: string }[]; timeZone: string; total: number }) {
  const zone = displayZone(timeZone);
  const days = planDays(sends, zone);
  const id = useId();
  const most = Math.max(1, ...days.map((d) => d.count));
  const charted = days.reduce((n, d) => n + d.count, 0);
  if (days.length === 0) return <p className="muted">No planned sends to chart.</p>;
  const shown = days.slice(0, CHART_DAYS);
  return (
    <figure className="plan-chart" data-testid="plan-chart" data-zone={zone} aria-labelledby={`${id}-cap`}>
      <figcaption id={`${id}-cap`}>
        Planned sends per day in {zone}, with UTC times
        {charted < total ? ` (the first ${charted} of ${total} sends)` : ''}
        {zone !== timeZone ? ` (the browser does not know the zone "${timeZone}")` : ''}
      </figcaption>
      <ol className="plan-days">
        {shown.map((d) => (
          <li key={d.day} className="plan-day" data-testid="plan-day" data-day={d.day} data-count={d.count}>
            <span className="plan-date">{formatDay(d.day)}</span>
            <svg className="plan-bar" width="100%" height="16" aria-hidden="true" focusable="false">
              <rect className="seg seg-planned" x="0" y="0" width={`${(d.count / most) * 100}%`} height="16" rx="2" />
            </svg>
            <span className="plan-count">
              {d.count} {d.count === 1 ? 'send' : 'sends'}
            </span>
            <span className="plan-when">
              {formatSpan(d.first, d.last, d.day)} {zone === 'UTC' ? '' : `${zone} · ${formatSpan(d.firstUtc, d.lastUtc, d.day)} `}UTC
            </span>
          </li>
        ))}
      </ol>
      {days.length > shown.length ? <p className="muted">and {days.length - shown.length} more days in the table.</p> : null}
      <details className="plan-table">
        <summary>Plan as a table</summary>
        <div className="table-scroll" role="region" aria-label="Plan per day" tabIndex={0}>
          <table>
            <caption className="visually-hidden">Planned sends per day in {zone}, with UTC times</caption>
            <thead>
              <tr>
                <th scope="col">Day ({zone})</th>
                <th scope="col">Sends</th>
                <th scope="col">First–last ({zone})</th>
                <th scope="col">First–last (UTC)</th>
              </tr>
            </thead>
            <tbody>
              {days.map((d) => (
                <tr key={d.day}>
                  <th scope="row">{d.day}</th>
                  <td>{d.count}</td>
                  <td>{formatSpan(d.first, d.last, d.day)}</td>
                  <td>{formatSpan(d.firstUtc, d.lastUtc, d.day)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
