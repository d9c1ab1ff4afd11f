// The campaign browser scenarios, against `make dev`: the
// campaign page creates, previews, provisions and cancels campaigns, and
// shows their counts and sends as the dev server pushes them (server-sent
// events). The planner places sends at whole minutes (EventBridge
// Scheduler invokes targets with 60 second precision:
// https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html),
// so the "a few seconds apart" is a minute apart here: these campaigns use a narrow window starting at
// the next whole minute, in UTC, with as many sends per day as recipients,
// so their sends are one minute apart. run.mjs starts the dev server with
// `-clock fake`: the scenarios read the server's time and move it ahead to
// each send (`clock`, see run.mjs) instead of waiting minutes for it.
// Selectors: see web/README.md ("Campaign page").

import assert from 'node:assert/strict';

import { checkState } from './a11y.mjs';

const PASSWORD = 'Correct horse 1';
const SESSION_KEY = 'unschedule.localSession'; // web/src/auth/local.ts

// Campaigns are for senders only: run.mjs starts the dev server with
// `-campaign-senders=@<SENDER_DOMAIN>`, so the users these scenarios sign
// up may send (everyone else gets 403, as in the cloud).
export const SENDER_DOMAIN = 'senders.example.com';

export async function signUp(page, url, tag) {
  const email = `${tag}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@${SENDER_DOMAIN}`;
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

/** The campaign emails (subject) in the token's user's outbox. */
export async function campaignEmails(url, token, subject) {
  const res = await fetch(`${url}/outbox.json`, { headers: { Authorization: token } });
  assert.equal(res.status, 200);
  const { emails } = await res.json();
  return emails.filter((e) => e.kind === 'campaign' && e.subject === subject);
}

const pad = (n) => String(n).padStart(2, '0');
const hhmm = (ms) => {
  const d = new Date(ms);
  return `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
};

/**
 * A window of n minutes from the first whole minute at least 45 s away on
 * the server's clock (UTC: time to fill the form, however loaded the
 * machine; the clock is moved to it, not waited for); moves the clock past
 * midnight first if the window would cross it.
 */
export async function nextWindow(clock, n) {
  for (;;) {
    const start = Math.ceil(((await clock.now()) + 45_000) / 60_000) * 60_000;
    const end = start + n * 60_000;
    if (new Date(start).getUTCDate() === new Date(end - 1).getUTCDate() && new Date(end).getUTCHours() + new Date(end).getUTCMinutes() > 0) {
      return { start, end, text: `${hhmm(start)}-${hhmm(end)}`, date: new Date(start).toISOString().slice(0, 10) };
    }
    await clock.advance(30);
  }
}

/** The n-th send's time (from 0): sends are a minute apart from the window's start. */
export const sendTime = (w, i) => w.start + i * 60_000;

/** Waits (in real time) until the page's Finished count is at least n. */
const finishedAtLeast = (page, n) =>
  page.waitForFunction((n) => Number(document.querySelector('[data-testid="count-Finished"]')?.textContent) >= n, n, {
    timeout: 20_000,
    polling: 100,
  });

/** Fills the new-campaign form for n recipients sending inside w. */
async function fillCampaign(page, subject, n, w) {
  const form = page.locator('form').filter({ has: page.getByRole('button', { name: 'Create campaign' }) });
  await form.getByLabel('Subject').fill(subject);
  await form.getByLabel('Email text').fill('Hello from the browser tests.');
  await form.getByLabel('Recipients').fill(Array.from({ length: n }, (_, i) => `reader${i}@example.com`).join('\n'));
  await form.getByLabel('Sends per day').fill(String(n));
  for (const day of ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday']) await form.getByLabel(day).check();
  await form.getByLabel('Daily windows').fill(w.text);
  await form.getByLabel('Time zone').fill('UTC');
  await form.getByLabel('Start date').fill(w.date);
  return form;
}

const count = async (page, state) => Number(await page.getByTestId(`count-${state}`).textContent());

/** Creates and provisions a campaign through the page; returns its id. */
async function createAndProvision(page, url, subject, n, w, check) {
  await page.goto(`${url}/#/campaigns`);
  await page.getByRole('heading', { name: 'New campaign' }).waitFor();
  const form = await fillCampaign(page, subject, n, w);
  await form.getByRole('button', { name: 'Preview plan' }).click();
  const summary = page.getByTestId('plan-summary');
  await summary.waitFor();
  assert.match(await summary.textContent(), new RegExp(`^${n} sends over 1 day`), 'the preview plans every send on one day');
  if (check) await check('campaign-preview');
  await form.getByRole('button', { name: 'Create campaign' }).click();
  await page.waitForURL(/#\/campaigns\/[A-Za-z0-9_-]+$/);
  const id = page.url().split('/').pop();
  await page.getByRole('heading', { name: subject }).waitFor();
  assert.equal(await page.getByTestId('campaign-status').textContent(), 'Draft');
  assert.equal(await count(page, 'Pending'), n);
  if (check) await check('campaign-draft');
  await page.getByRole('button', { name: 'Provision' }).click();
  await page.getByTestId('campaign-status').filter({ hasText: 'Active' }).waitFor();
  await page.getByTestId('live-state').filter({ hasText: 'Live updates are on.' }).waitFor();
  return id;
}

export const campaignScenarios = [
  {
    name: 'Campaign 1: 5 sends a minute apart, counts move live to Finished, 5 emails in the outbox',
    async run({ page, url, log, results, clock }) {
      const check = (state) => checkState(page, results, `desktop-${state}`);
      const token = await signUp(page, url, 'camp1');
      const w = await nextWindow(clock, 5);
      const subject = `C1 news ${Date.now()}`;
      const id = await createAndProvision(page, url, subject, 5, w, check);
      // From here on the page must not poll: every change arrives pushed.
      const polls = [];
      page.on('request', (r) => {
        if (r.method() === 'GET' && r.url().includes(`/campaigns/${id}?`)) polls.push(r.url());
      });
      const seen = [];
      for (let done = 1; done <= 5; done++) {
        // Move the server's clock just past the send's minute: the advance
        // fires it, and the page hears of it over the event stream.
        const at = await clock.advanceTo(sendTime(w, done - 1) + 1_000);
        await finishedAtLeast(page, done);
        const f = await count(page, 'Finished');
        seen.push(f);
        log(`Finished ${f} at ${new Date(at).toISOString().slice(11, 19)} server time (Pending ${await count(page, 'Pending')}, Running ${await count(page, 'Running')})`);
        if (done === 1) await check('campaign-sending');
        done = f;
      }
      assert.equal(await count(page, 'Finished'), 5);
      assert.equal(await count(page, 'Pending'), 0);
      assert.equal(await page.locator('[data-testid="send-row"][data-state="Finished"]').count(), 5, 'every send row shows Finished');
      assert.ok(seen.length >= 2, `the counts moved in steps (${seen.join(', ')}), not at once`);
      assert.deepEqual(polls, [], 'no polling while the live channel was up');
      assert.match(await page.getByTestId('live-state').textContent(), /Live updates are on/);
      const mail = await campaignEmails(url, token, subject);
      assert.deepEqual(mail.map((m) => m.to[0]).sort(), [0, 1, 2, 3, 4].map((i) => `reader${i}@example.com`));
      await check('campaign-finished');
    },
  },
  {
    name: 'Campaign 2: cancelled part-way at 390 px, the remaining sends never go out',
    async run({ page, url, log, results, clock }) {
      await page.setViewportSize({ width: 390, height: 844 });
      const check = (state) => checkState(page, results, `mobile-${state}`);
      const token = await signUp(page, url, 'camp2');
      const w = await nextWindow(clock, 3);
      const subject = `C2 news ${Date.now()}`;
      await createAndProvision(page, url, subject, 3, w, check);
      await clock.advanceTo(sendTime(w, 0) + 1_000); // the first send only: the next is a minute later
      await finishedAtLeast(page, 1);
      await page.getByRole('button', { name: 'Cancel campaign' }).click();
      await page.getByTestId('campaign-status').filter({ hasText: 'Cancelled' }).waitFor();
      const finished = await count(page, 'Finished');
      const cancelled = await count(page, 'Cancelled');
      log(`cancelled at ${new Date(await clock.now()).toISOString().slice(11, 19)} server time: ${finished} finished, ${cancelled} cancelled`);
      assert.ok(finished >= 1 && cancelled >= 1 && finished + cancelled === 3, `1+ finished and the rest cancelled (${finished}, ${cancelled})`);
      assert.equal(await page.locator('[data-testid="send-row"][data-state="Cancelled"]').count(), cancelled, 'the cancelled rows show it');
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 0, `no horizontal scrolling at 390 px (${overflow} px)`);
      await check('campaign-cancelled');
      // Move the clock past every planned time (the advance fires whatever
      // schedule is left), then nothing more has been sent.
      const past = await clock.advanceTo(w.end + 10_000);
      log(`clock moved to ${new Date(past).toISOString().slice(11, 19)}, past the last planned send`);
      assert.equal((await campaignEmails(url, token, subject)).length, finished, 'only the sends before the cancel reached the outbox');
      assert.equal(await count(page, 'Finished'), finished);
      assert.equal(await count(page, 'Cancelled'), cancelled);
    },
  },
];
