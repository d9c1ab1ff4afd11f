// The plan per day: sends bucketed by their calendar day in the campaign's
// time zone (from the UTC instant, with Intl, not from the API's `local`
// text), each day with its first and last send time there and in UTC.

/** A wall-clock reading: date YYYY-MM-DD and time HH:MM:SS. */
export interface Wall {
  date: string;
  time: string;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    // hourCycle h23: some engines print midnight as "24" with hour12 false.
    f = new Intl.DateTimeFormat('en-CA', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(zone, f);
  }
  return f;
}

/** Whether Intl knows the IANA zone name. */
export function isZone(zone: string): boolean {
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}

/** The zone the page shows times in: the campaign's, or UTC when the browser does not know it. */
export function displayZone(zone: string): string {
  return zone !== '' && isZone(zone) ? zone : 'UTC';
}

/** The wall-clock reading of instant ms in zone (a zone Intl knows). */
export function wallTime(ms: number, zone: string): Wall {
  const p: Record<string, string> = {};
  for (const part of formatter(zone).formatToParts(ms)) p[part.type] = part.value;
  return { date: `${p.year}-${p.month}-${p.day}`, time: `${p.hour}:${p.minute}:${p.second}` };
}

/** One day of the plan. */
export interface PlanDay {
  /** YYYY-MM-DD in the campaign's zone. */
  day: string;
  count: number;
  /** The first and last send of the day, in the zone and in UTC. */
  first: Wall;
  last: Wall;
  firstUtc: Wall;
  lastUtc: Wall;
}

/**
 * The sends per calendar day in zone, days in order, only days with a send.
 * Sends whose sendAt does not parse are left out.
 */
export function planDays(sends: readonly { sendAt: string }[], zone: string): PlanDay[] {
  const byDay = new Map<string, { count: number; min: number; max: number }>();
  for (const s of sends) {
    const ms = Date.parse(s.sendAt);
    if (Number.isNaN(ms)) continue;
    const day = wallTime(ms, zone).date;
    const b = byDay.get(day);
    if (b) {
      b.count++;
      b.min = Math.min(b.min, ms);
      b.max = Math.max(b.max, ms);
    } else byDay.set(day, { count: 1, min: ms, max: ms });
  }
  return [...byDay.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([day, b]) => ({
      day,
      count: b.count,
      first: wallTime(b.min, zone),
      last: wallTime(b.max, zone),
      firstUtc: wallTime(b.min, 'UTC'),
      lastUtc: wallTime(b.max, 'UTC'),
    }));
}

const dayFormat = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', weekday: 'short', day: 'numeric', month: 'short', year: 'numeric' });
const shortDayFormat = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', day: 'numeric', month: 'short' });

function dateMs(date: string): number {
  const [y, m, d] = date.split('-').map(Number);
  return Date.UTC(y ?? 1970, (m ?? 1) - 1, d ?? 1);
}

/** "Tue, 3 Mar 2026" for 2026-03-03 (a calendar date, no zone). */
export function formatDay(date: string): string {
  return dayFormat.format(dateMs(date));
}

/** "HH:MM–HH:MM" when both are on day, else both with their short date ("2 Mar 23:00–3 Mar 04:00"). */
export function formatSpan(first: Wall, last: Wall, day: string): string {
  const dated = first.date !== day || last.date !== day;
  const one = (w: Wall) => (dated ? `${shortDayFormat.format(dateMs(w.date))} ${w.time.slice(0, 5)}` : w.time.slice(0, 5));
  const a = one(first);
  const b = one(last);
  return a === b ? a : `${a}–${b}`;
}

/** A wall-clock text such as the API's `local` ("2030-01-01T12:00:00") as "2030-01-01 12:00". */
export function formatLocal(local: string): string {
  const m = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d)/.exec(local);
  return m ? `${m[1]} ${m[2]}` : local;
}
