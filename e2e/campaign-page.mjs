// The campaign page at a glance, against `make dev`: the plan chart (per
// day in the campaign's zone, UTC beside it) and the progress bar agree with
// the campaign API read by the test itself; the sends timeline shows planned
// against actual times; the state filter and the CSV download work; axe-core
// finds no WCAG 2.2 AA violation; and at 390 px nothing scrolls sideways.
// Selectors: see web/README.md ("Campaign page").
//
// The campaign's zone is Asia/Kolkata (UTC+05:30): its days and times differ
// from UTC and from the browser's Europe/Berlin. Its two sends are a minute
// apart from the next whole minute on the server's clock (the planner
// places sends at whole minutes); the scenario moves the server's fake
// clock to the first one (run.mjs `clock`) instead of waiting for it. The
// window is read from the server's clock, not this process's: the
// campaign scenarios before this one have moved it ahead.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

import { checkState } from './a11y.mjs';
import { SENDER_DOMAIN } from './campaign-scenarios.mjs';

const PASSWORD = 'Correct horse 1';
const SESSION_KEY = 'unschedule.localSession'; // web/src/auth/local.ts
const ZONE = 'Asia/Kolkata';
const ENDED = ['Finished', 'Failed', 'Cancelled', 'Suppressed'];
const STATES = ['Pending', 'Running', 'Finished', 'Failed', 'Cancelled', 'Suppressed'];

async function signUp(page, url) {
  const email = `page-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@${SENDER_DOMAIN}`;
  await page.goto(url);
  const form = page.getByTestId('auth-form');
  await form.getByRole('button', { name: 'Create an account' }).click();
  await form.getByLabel('Email').fill(email);
  await form.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await form.getByRole('button', { name: 'Sign up' }).click();
  await page.getByTestId('create-task-form').waitFor();
  const token = await page.evaluate((key) => JSON.parse(sessionStorage.getItem(key) || '{}').idToken, SESSION_KEY);
  assert.ok(token, 'signed in');
  return token;
}

async function api(url, token, method, path, body) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { Authorization: token, Accept: 'application/json', ...(body ? { 'Content-Type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  assert.equal(res.status, 200, `${method} ${path}: HTTP ${res.status}`);
  return res.json();
}

/** The wall clock in zone: { date: YYYY-MM-DD, hhmm: HH:MM }. */
function wall(ms, zone) {
  const p = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit' })
      .formatToParts(ms)
      .map((x) => [x.type, x.value]),
  );
  return { date: `${p.year}-${p.month}-${p.day}`, hhmm: `${p.hour}:${p.minute}` };
}

/**
 * A window of n minutes in ZONE from the first whole minute at least 45 s
 * away on the server's clock (time to fill the form); moves the clock on
 * if it would cross midnight there.
 */
async function nextWindow(clock, n) {
  for (;;) {
    const start = Math.ceil(((await clock.now()) + 45_000) / 60_000) * 60_000;
    const end = start + n * 60_000;
    const a = wall(start, ZONE);
    const b = wall(end, ZONE);
    if (a.date === b.date && b.hhmm !== '00:00') return { start, end, text: `${a.hhmm}-${b.hhmm}`, date: a.date };
    await clock.advance(30);
  }
}

/** The sends per day as the API dates them (its `local`, from Go's zone database): [[day, count]] in order. */
function apiDays(sends) {
  const m = new Map();
  for (const s of sends) m.set(s.local.slice(0, 10), (m.get(s.local.slice(0, 10)) ?? 0) + 1);
  return [...m.entries()].sort(([a], [b]) => a.localeCompare(b));
}

/** The plan chart's days as the page shows them. */
async function chartDays(page) {
  const chart = page.getByTestId('plan-chart');
  await chart.waitFor();
  assert.equal(await chart.getAttribute('data-zone'), ZONE);
  return page.getByTestId('plan-day').evaluateAll((els) => els.map((e) => [e.getAttribute('data-day'), Number(e.getAttribute('data-count'))]));
}

/** The progress bar and its legend: { now, max, counts }. */
async function progress(page) {
  const bar = page.getByRole('progressbar', { name: 'Campaign progress' });
  const counts = {};
  for (const s of STATES) counts[s] = Number(await page.getByTestId(`count-${s}`).textContent());
  return { now: Number(await bar.getAttribute('aria-valuenow')), max: Number(await bar.getAttribute('aria-valuemax')), counts };
}

const expected = (c) => ({
  now: ENDED.reduce((n, s) => n + (c.counts?.[s] ?? 0), 0),
  max: c.total,
  counts: Object.fromEntries(STATES.map((s) => [s, c.counts?.[s] ?? 0])),
});

/**
 * Waits until the page's progress equals the API's as read at the same
 * moment (a live update may land between the two reads); returns the API's campaign.
 */
async function progressAgrees(page, url, token, id) {
  let last;
  for (let i = 0; i < 40; i++) {
    const c = await api(url, token, 'GET', `/campaigns/${id}?limit=500`);
    const got = await progress(page);
    last = { got, want: expected(c) };
    if (JSON.stringify(got) === JSON.stringify(last.want)) return c;
    await sleep(250);
  }
  assert.deepEqual(last.got, last.want, 'the progress bar and its legend agree with GET /campaigns/{id}');
  return null;
}

export const campaignPageScenarios = [
  {
    name: 'Campaign page: the plan chart and the progress bar agree with the API, timeline, filter, CSV, axe, 390 px',
    async run({ page, url, log, results, clock }) {
      const token = await signUp(page, url);
      const n = 2;
      const w = await nextWindow(clock, n);
      const subject = `Page check, "quoted", ${Date.now()}`;
      const recipients = Array.from({ length: n }, (_, i) => `glance${i}@example.com`);
      const body = {
        subject,
        body: 'Hello from the campaign page test.',
        recipients: recipients.map((email) => ({ email })),
        schedule: { sendsPerDay: n, weekdays: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], windows: [w.text], timeZone: ZONE, startDate: w.date },
      };

      // The preview: its chart agrees with POST /campaigns/preview.
      await page.goto(`${url}/#/campaigns`);
      await page.getByRole('heading', { name: 'New campaign' }).waitFor();
      const form = page.locator('form').filter({ has: page.getByRole('button', { name: 'Create campaign' }) });
      await form.getByLabel('Subject').fill(body.subject);
      await form.getByLabel('Email text').fill(body.body);
      await form.getByLabel('Recipients').fill(recipients.join('\n'));
      await form.getByLabel('Sends per day').fill(String(n));
      for (const day of ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday']) await form.getByLabel(day).check();
      await form.getByLabel('Daily windows').fill(w.text);
      await form.getByLabel('Time zone').fill(ZONE);
      await form.getByLabel('Start date').fill(w.date);
      await form.getByRole('button', { name: 'Preview plan' }).click();
      await page.getByTestId('plan-summary').waitFor();
      const preview = await api(url, token, 'POST', '/campaigns/preview', body);
      assert.deepEqual(await chartDays(page), apiDays(preview.sends), 'the preview chart has the API plan per day');
      const firstDay = page.getByTestId('plan-day').first();
      // UTC beside the zone's times, with its date when that differs (from
      // 18:30 UTC the zone is already on the next day).
      assert.match(await firstDay.textContent(), new RegExp(`${w.text.slice(0, 5)}.*${ZONE} · (\\d{1,2} \\w{3} )?\\d\\d:\\d\\d.*UTC`), 'times in the zone, UTC beside them');
      await checkState(page, results, 'desktop-campaign-page-preview');

      // Created (Draft): chart and progress agree with GET /campaigns/{id}.
      await form.getByRole('button', { name: 'Create campaign' }).click();
      await page.waitForURL(/#\/campaigns\/[A-Za-z0-9_-]+$/);
      const id = page.url().split('/').pop();
      await page.getByRole('heading', { name: subject }).waitFor();
      const draft = await progressAgrees(page, url, token, id);
      assert.equal(draft.total, n);
      assert.deepEqual(await chartDays(page), apiDays(draft.sends), 'the campaign chart has the API plan per day');

      // Provisioned: the first send goes out; progress still agrees, and its row shows planned against actual.
      await page.getByRole('button', { name: 'Provision' }).click();
      await page.getByTestId('campaign-status').filter({ hasText: 'Active' }).waitFor();
      await clock.advanceTo(w.start + 1_000); // the first send only: the next is a minute later
      await page.waitForFunction(() => Number(document.querySelector('[data-testid="count-Finished"]')?.textContent) >= 1, null, {
        timeout: 20_000,
        polling: 200,
      });
      const c = await progressAgrees(page, url, token, id);
      log(`at ${new Date(await clock.now()).toISOString().slice(11, 19)} server time: ${JSON.stringify(c.counts)}`);
      for (const s of c.sends.filter((x) => x.state === 'Finished')) {
        assert.ok(s.sentAt, `the API has the actual time of ${s.email}`);
        const row = page.locator('[data-testid="send-row"]').filter({ hasText: s.email });
        const late = (Date.parse(s.sentAt) - Date.parse(s.sendAt)) / 1000 > 60;
        assert.equal(await row.getAttribute('data-late'), late ? 'true' : null, `${s.email} is marked late only when it is`);
        const text = await row.textContent();
        assert.match(text, /Planned.*Sent.*Lateness/, 'the row shows planned, sent and lateness');
        assert.ok(text.includes(wall(Date.parse(s.sendAt), ZONE).hhmm), 'planned in the campaign zone');
        log(`${s.email}: planned ${s.sendAt}, sent ${s.sentAt}: ${await row.getByTestId('send-lateness').textContent()}`);
      }
      await checkState(page, results, 'desktop-campaign-page-sending');
      await page.getByText('Plan as a table').click();
      await page.getByRole('table').waitFor();
      await checkState(page, results, 'desktop-campaign-page-table');

      // The filter shows one state; the CSV holds every send with proper quoting.
      const show = page.getByLabel('Show', { exact: true });
      await show.selectOption('Finished');
      const shownStates = await page.locator('[data-testid="send-row"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-state')));
      assert.ok(shownStates.length >= 1 && shownStates.every((s) => s === 'Finished'), `only Finished rows (${shownStates})`);
      await show.selectOption('all');
      assert.equal(await page.locator('[data-testid="send-row"]').count(), n);
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
      assert.equal(download.suggestedFilename(), `campaign-${id}-sends.csv`);
      const csv = (await readFile(await download.path(), 'utf8')).replace(/^\uFEFF/, '');
      const lines = csv.split('\r\n');
      assert.equal(lines.length, n + 2, `a header, ${n} rows and the final CRLF`);
      assert.match(lines[0], /^index,email,subject,state,planned_utc,/);
      const all = await api(url, token, 'GET', `/campaigns/${id}?limit=500`);
      for (const s of all.sends) {
        const line = lines.find((l) => l.startsWith(`${s.index},${s.email},`));
        assert.ok(line, `a row for ${s.email}`);
        assert.ok(line.includes(`"${subject.replace(/"/g, '""')}"`), 'the subject with its comma and quotes is quoted');
        assert.ok(line.includes(s.sendAt), 'the planned UTC time');
      }

      // At 390 px: no horizontal scrolling, and still no violation.
      await page.setViewportSize({ width: 390, height: 844 });
      await page.getByRole('progressbar', { name: 'Campaign progress' }).waitFor();
      const width = await page.evaluate(() => document.scrollingElement.scrollWidth);
      assert.ok(width <= 390, `no horizontal scrolling at 390 px (scrollWidth ${width})`);
      const clipped = await page.locator('.plan-date, .plan-count').evaluateAll((els) => els.filter((e) => e.scrollWidth > e.clientWidth).map((e) => e.textContent));
      assert.deepEqual(clipped, [], 'each day label and count fits its column at 390 px');
      await checkState(page, results, 'mobile-campaign-page');
      await page.setViewportSize({ width: 1100, height: 900 });
    },
  },
];
