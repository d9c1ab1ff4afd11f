// Unsubscribe suppresses the next send, against `make dev` on its fake
// clock: campaign A sends to one address; its email in the dev outbox
// carries the signed one-click unsubscribe link (RFC 8058), which the
// browser follows and confirms; campaign B's later send to the same
// address then ends Suppressed with nothing sent (the outbox holds no new
// email to it), while B's other recipient gets theirs. The API and the
// campaign page (count, progress bar, row, filter) both show it. A bounce
// made with the outbox's button goes through the bounce function's
// handler and suppresses the next send the same way.
// Selectors: see web/README.md ("Campaign page").

import assert from 'node:assert/strict';

import { checkState } from './a11y.mjs';
import { campaignEmails, nextWindow, sendTime, signUp } from './campaign-scenarios.mjs';

async function api(url, token, method, path, body) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { Authorization: token, Accept: 'application/json', ...(body ? { 'Content-Type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const out = await res.json();
  assert.ok(res.status >= 200 && res.status < 300, `${method} ${path}: HTTP ${res.status} ${JSON.stringify(out)}`);
  return out;
}

const pad = (n) => String(n).padStart(2, '0');
const hhmm = (ms) => `${pad(new Date(ms).getUTCHours())}:${pad(new Date(ms).getUTCMinutes())}`;

/** Creates and provisions a campaign (through the API) with one send per recipient, a minute apart from `from`. */
async function campaign(url, token, subject, recipients, from, date) {
  const n = recipients.length;
  const c = await api(url, token, 'POST', '/campaigns', {
    subject,
    body: 'Hello from the unsubscribe test.',
    recipients: recipients.map((email) => ({ email })),
    schedule: { sendsPerDay: n, weekdays: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], windows: [`${hhmm(from)}-${hhmm(from + n * 60_000)}`], timeZone: 'UTC', startDate: date },
  });
  await api(url, token, 'POST', `/campaigns/${c.id}/provision`);
  return c;
}

export const campaignUnsubscribeScenarios = [
  {
    name: 'Campaign unsubscribe: the outbox link suppresses the next send to that address, in the API and on the page',
    async run({ page, url, log, results, clock }) {
      const token = await signUp(page, url, 'unsub');
      const w = await nextWindow(clock, 3);
      const stamp = Date.now();
      const leaver = `leaver-${stamp}@example.com`;
      const stayer = `stayer-${stamp}@example.com`;
      const a = await campaign(url, token, `Unsub A ${stamp}`, [leaver], sendTime(w, 0), w.date);
      const b = await campaign(url, token, `Unsub B ${stamp}`, [stayer, leaver], sendTime(w, 1), w.date);
      const aSend = Date.parse(a.sends[0].sendAt);
      const bLeaver = b.sends.find((s) => s.email === leaver);
      assert.ok(aSend < Date.parse(bLeaver.sendAt), `A's send (${a.sends[0].sendAt}) is before B's to the same address (${bLeaver.sendAt})`);

      // A's send goes out: its email is in the outbox.
      await clock.advanceTo(aSend + 1_000);
      const aNow = await api(url, token, 'GET', `/campaigns/${a.id}`);
      assert.equal(aNow.sends[0].state, 'Finished', `A's send has gone out (${JSON.stringify(aNow.counts)})`);
      const toLeaver = async () => [...(await campaignEmails(url, token, a.subject)), ...(await campaignEmails(url, token, b.subject))].filter((m) => m.to[0] === leaver);
      assert.equal((await toLeaver()).length, 1, 'one email to the address so far');

      // The outbox page shows it with its unsubscribe link; follow the link and confirm.
      await page.goto(`${url}/outbox`);
      const row = page.getByTestId('outbox-email').filter({ hasText: a.subject });
      await row.waitFor();
      const link = /unsubscribe: (\S+)/.exec(await row.locator('pre:not(.headers)').textContent())?.[1];
      assert.ok(link, 'the email body carries an unsubscribe link');
      assert.equal(new URL(link).origin, new URL(url).origin, 'the link points to the dev server');
      assert.equal(new URL(link).pathname, '/unsubscribe');
      await page.goto(link);
      await page.getByRole('heading', { name: 'Unsubscribe', exact: true }).waitFor();
      assert.ok((await page.textContent('body')).includes(leaver), 'the page names the address');
      await checkState(page, results, 'desktop-unsubscribe-confirm');
      await page.getByRole('button', { name: 'Unsubscribe' }).click();
      await page.getByRole('heading', { name: 'Unsubscribed' }).waitFor();
      log(`unsubscribed ${leaver} at ${new Date(await clock.now()).toISOString().slice(11, 19)} server time`);

      // Past B's sends: the leaver's ends Suppressed with nothing sent, the stayer's goes out.
      for (const i of [1, 2]) await clock.advanceTo(sendTime(w, i) + 1_000); // each on time
      const bNow = await api(url, token, 'GET', `/campaigns/${b.id}`);
      const state = Object.fromEntries(bNow.sends.map((s) => [s.email, s]));
      log(`B: ${bNow.status} ${JSON.stringify(bNow.counts)}; ${leaver}: ${state[leaver].state} (${state[leaver].reason})`);
      assert.equal(state[leaver].state, 'Suppressed', 'the unsubscribed address is suppressed');
      assert.ok(!state[leaver].sentAt, 'a suppressed send has no sent time');
      assert.equal(state[stayer].state, 'Finished', 'the other recipient still gets theirs');
      assert.equal(bNow.counts.Suppressed, 1, 'the API counts it');
      assert.equal((await toLeaver()).length, 1, 'no new email to the unsubscribed address');
      assert.deepEqual((await campaignEmails(url, token, b.subject)).map((m) => m.to[0]), [stayer], "B's only email is the stayer's");

      // The page: the count, the bar (both of B's sends have ended), the row, the filter.
      await page.goto(`${url}/#/campaigns/${b.id}`);
      await page.getByRole('heading', { name: b.subject }).waitFor();
      await page.getByTestId('count-Suppressed').filter({ hasText: '1' }).waitFor();
      const bar = page.getByRole('progressbar', { name: 'Campaign progress' });
      assert.equal(await bar.getAttribute('aria-valuenow'), '2', 'a suppressed send counts as ended');
      assert.match(await bar.getAttribute('aria-valuetext'), /1 suppressed/);
      await page.getByLabel('Show', { exact: true }).selectOption('Suppressed');
      const rows = page.locator('[data-testid="send-row"]');
      assert.equal(await rows.count(), 1, 'the filter shows the suppressed send');
      assert.equal(await rows.first().getAttribute('data-state'), 'Suppressed');
      assert.ok((await rows.first().textContent()).includes(leaver));
      const clipped = await page.locator('.count dt').evaluateAll((els) => els.filter((e) => e.scrollWidth > e.clientWidth).map((e) => e.textContent));
      assert.deepEqual(clipped, [], 'each state name fits its box');
      await checkState(page, results, 'desktop-campaign-suppressed');
    },
  },
  {
    name: 'Campaign bounce: a bounce made in the outbox goes through the bounce handler and suppresses the next send',
    async run({ page, url, log, results, clock }) {
      const token = await signUp(page, url, 'bounce');
      const w = await nextWindow(clock, 3);
      const stamp = Date.now();
      const bouncer = `bouncer-${stamp}@example.com`;
      const reader = `reader-${stamp}@example.com`;
      const a = await campaign(url, token, `Bounce A ${stamp}`, [bouncer], sendTime(w, 0), w.date);
      const b = await campaign(url, token, `Bounce B ${stamp}`, [reader, bouncer], sendTime(w, 1), w.date);
      await clock.advanceTo(Date.parse(a.sends[0].sendAt) + 1_000);
      const [sent] = await campaignEmails(url, token, a.subject);
      assert.ok(sent, "A's email is in the outbox");

      // The outbox shows the headers the mail carries, as /outbox.json does.
      const link = /unsubscribe: (\S+)/.exec(sent.body)?.[1];
      assert.deepEqual(sent.headers, [
        { name: 'List-Unsubscribe', value: `<${link}>` },
        { name: 'List-Unsubscribe-Post', value: 'List-Unsubscribe=One-Click' },
      ]);
      await page.goto(`${url}/outbox`);
      const row = page.getByTestId('outbox-email').filter({ hasText: a.subject });
      await row.waitFor();
      assert.equal(await row.getByTestId('outbox-headers').textContent(), `List-Unsubscribe: <${link}>\nList-Unsubscribe-Post: List-Unsubscribe=One-Click`);

      // Bounce it: the status names the address now suppressed.
      await row.getByTestId('outbox-bounce').click();
      await page.getByTestId('outbox-status').filter({ hasText: `${bouncer} suppressed` }).waitFor();
      await checkState(page, results, 'desktop-outbox-bounced');
      log(`bounced ${bouncer} at ${new Date(await clock.now()).toISOString().slice(11, 19)} server time`);

      // Past B's sends: the bounced address ends Suppressed (reason Bounce), the other is sent.
      for (const i of [1, 2]) await clock.advanceTo(sendTime(w, i) + 1_000);
      const bNow = await api(url, token, 'GET', `/campaigns/${b.id}`);
      const state = Object.fromEntries(bNow.sends.map((s) => [s.email, s]));
      log(`B: ${JSON.stringify(bNow.counts)}; ${bouncer}: ${state[bouncer].state} (${state[bouncer].reason})`);
      assert.equal(state[bouncer].state, 'Suppressed', 'the bounced address is suppressed');
      assert.match(state[bouncer].reason ?? '', /Bounce/i, 'the reason says it bounced');
      assert.equal(state[reader].state, 'Finished');
      assert.deepEqual((await campaignEmails(url, token, b.subject)).map((m) => m.to[0]), [reader], 'no email to the bounced address');
    },
  },
];
