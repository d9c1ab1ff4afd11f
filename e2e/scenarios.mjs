// The browser scenarios of issue 5 §4. Each gets a fresh tab (signed out)
// and the dev server's URL, signs up its own user, and throws on failure.
// Selectors: see web/README.md ("Selectors for browser tests").

import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';

const PASSWORD = 'correct horse 1';

/** The datetime-local value of now + ms in the browser's own timezone. */
function localDue(page, ms) {
  return page.evaluate((ms) => {
    const d = new Date(Date.now() + ms);
    const p = (n) => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
  }, ms);
}

// The web app's local session in a tab's sessionStorage (web/src/auth/local.ts).
const SESSION_KEY = 'unschedule.localSession';

/** The ID token of the user signed in to the web app in this tab. */
async function tokenOf(page) {
  const token = await page.evaluate((key) => JSON.parse(sessionStorage.getItem(key) || '{}').idToken, SESSION_KEY);
  assert.ok(token, 'the web app keeps a local session in this tab');
  return token;
}

/** GETs a JSON page of the dev server as the token's user. */
async function getJSON(url, token) {
  const res = await fetch(url, { headers: { Accept: 'application/json', Authorization: token } });
  assert.equal(res.status, 200, `GET ${url}`);
  return res.json();
}

/** The expiry emails of a task in the outbox of the token's user. */
async function expiryEmails(url, token, taskId) {
  const { emails } = await getJSON(`${url}/outbox.json`, token);
  return emails.filter((e) => e.kind === 'task-expired' && e.taskId === taskId);
}

/** The live schedules of a task, as the token's user sees them. */
async function schedulesOf(url, token, taskId) {
  const { schedules } = await getJSON(`${url}/debug/schedules.json`, token);
  return schedules.filter((s) => s.taskId === taskId);
}

/** Signs a user up and in through the local sign-in API; returns the token. */
async function apiUser(url, tag) {
  const email = `${tag}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const post = (path) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
  assert.equal((await post('/local-auth/signup')).status, 201, 'sign-up');
  const res = await post('/local-auth/signin');
  assert.equal(res.status, 200, 'sign-in');
  return (await res.json()).idToken;
}

/** Polls fn until it returns true, or fails after ms. */
async function eventually(what, ms, fn) {
  const end = Date.now() + ms;
  for (;;) {
    if (await fn()) return;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(200);
  }
}

async function signUpAndIn(page, url, tag) {
  const email = `${tag}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  await page.goto(url);
  const form = page.getByTestId('auth-form');
  await form.getByLabel('Email').fill(email);
  await form.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await form.getByRole('button', { name: 'Sign up' }).click();
  await page.getByText(/Account created for/).waitFor();
  await form.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('create-task-form').waitFor();
  return email;
}

function row(page, id, status) {
  const s = status ? `[data-status="${status}"]` : '';
  return page.locator(`li[data-testid="task-row"][data-task-id="${id}"]${s}`);
}

/** Creates a task due in ms through the form; returns its id and deadline. */
async function createTask(page, url, title, ms) {
  const form = page.getByTestId('create-task-form');
  await form.getByLabel('Title').fill(title);
  await form.getByLabel('Description').fill('made by the browser tests');
  await form.getByLabel('Due').fill(await localDue(page, ms));
  await form.getByRole('button', { name: 'Add task' }).click();
  const r = page.locator('li[data-testid="task-row"]').filter({ hasText: title });
  await r.waitFor();
  const id = await r.getAttribute('data-task-id');
  assert.equal(await r.getAttribute('data-status'), 'Pending');
  const token = await tokenOf(page);
  const [sched] = await schedulesOf(url, token, id);
  assert.ok(sched, `task ${id} has a schedule`);
  return { id, dueMs: Date.parse(sched.dueAt), token };
}

async function sleepUntil(ms) {
  const d = ms - Date.now();
  if (d > 0) await sleep(d);
}

export const scenarios = [
  {
    name: 'Scenario 1: sign up, sign in, a task expires, one notification',
    async run({ page, url, log }) {
      const email = await signUpAndIn(page, url, 's1');
      const { id, dueMs, token } = await createTask(page, url, 'S1 water the plants', 6_000);
      await row(page, id, 'Expired').waitFor({ timeout: dueMs - Date.now() + 20_000 });
      log(`shown Expired ${((Date.now() - dueMs) / 1000).toFixed(1)} s after the deadline (the page polls every 3 s)`);
      const mails = await expiryEmails(url, token, id);
      assert.equal(mails.length, 1, 'one expiry email');
      assert.deepEqual(mails[0].to, [email]);
      assert.match(mails[0].subject, /^Task expired: S1 water the plants$/);
      assert.deepEqual(await schedulesOf(url, token, id), [], 'no schedule left');

      // The outbox and the schedules need the local sign-in, and show
      // each user only their own.
      for (const path of ['/outbox.json', '/debug/schedules.json']) {
        assert.equal((await fetch(`${url}${path}`)).status, 401, `${path} without a token`);
      }
      const other = await apiUser(url, 's1-other');
      assert.deepEqual(await expiryEmails(url, other, id), [], "another user's outbox lacks this email");
      const { emails: othersMail } = await getJSON(`${url}/outbox.json`, other);
      assert.ok(!JSON.stringify(othersMail).includes(email), "another user's outbox never names this user");

      const emailRow = (p) => p.locator(`[data-testid="outbox-email"][data-task-id="${id}"]`);
      const escaped = new RegExp(email.replace(/[.]/g, '\\.'));
      // In the app's tab, the outbox page uses the app's session.
      await page.goto(`${url}/outbox`);
      await emailRow(page).waitFor();
      assert.equal(await emailRow(page).count(), 1, 'the outbox page shows one email for the task');
      assert.match(await emailRow(page).innerText(), escaped);
      // In a new tab (no session) it asks to sign in first.
      const outbox = await page.context().newPage();
      await outbox.goto(`${url}/outbox`);
      const form = outbox.getByTestId('outbox-signin');
      await form.waitFor();
      assert.equal(await outbox.locator('[data-testid="outbox-email"]').count(), 0, 'no mail before signing in');
      await form.getByLabel('Email').fill(email);
      await form.getByLabel('Password').fill(PASSWORD);
      await form.getByRole('button', { name: 'Sign in' }).click();
      await emailRow(outbox).waitFor();
      assert.match(await emailRow(outbox).innerText(), escaped);
      await outbox.close();

      await sleep(1_000); // a second step would have delivered a duplicate by now
      assert.equal((await expiryEmails(url, token, id)).length, 1, 'still one expiry email');
    },
  },
  {
    name: 'Scenario 2: completed before its deadline, stays Done, no notification',
    async run({ page, url, log }) {
      await signUpAndIn(page, url, 's2');
      const { id, dueMs, token } = await createTask(page, url, 'S2 pay the rent', 8_000);
      await row(page, id).getByRole('button', { name: 'Complete' }).click();
      await row(page, id, 'Done').waitFor();
      assert.ok(Date.now() < dueMs, 'completed before the deadline');
      const t = Date.now();
      await eventually('the schedule to be deleted', 5_000, async () => (await schedulesOf(url, token, id)).length === 0);
      log(`schedule deleted by the cancellation pipeline ${((Date.now() - t) / 1000).toFixed(1)} s after Done was shown`);
      await sleepUntil(dueMs + 3_000);
      await page.reload();
      await row(page, id, 'Done').waitFor();
      assert.deepEqual(await expiryEmails(url, token, id), [], 'no expiry email');
      assert.deepEqual(await schedulesOf(url, token, id), [], 'no schedule left');
    },
  },
  {
    name: 'Scenario 3: deadline moved later, no expiry at the old time',
    async run({ page, url, log }) {
      await signUpAndIn(page, url, 's3');
      const { id, dueMs: oldDue, token } = await createTask(page, url, 'S3 renew the passport', 8_000);
      await row(page, id).getByRole('button', { name: 'Edit' }).click();
      const edit = row(page, id).getByTestId('edit-task-form');
      await edit.getByLabel('Due').fill(await localDue(page, 18_000));
      await edit.getByRole('button', { name: 'Save' }).click();
      await edit.waitFor({ state: 'detached' });
      assert.ok(Date.now() < oldDue, 'moved before the old deadline');
      let newDue = 0;
      await eventually('the schedule to move', 5_000, async () => {
        const [s] = await schedulesOf(url, token, id);
        newDue = s ? Date.parse(s.dueAt) : 0;
        return newDue > oldDue;
      });
      log(`deadline moved by ${((newDue - oldDue) / 1000).toFixed(0)} s`);
      await sleepUntil(oldDue + 3_000);
      assert.equal(await row(page, id).getAttribute('data-status'), 'Pending', 'still Pending past the old deadline');
      assert.deepEqual(await expiryEmails(url, token, id), [], 'no email at the old deadline');
      await row(page, id, 'Expired').waitFor({ timeout: newDue - Date.now() + 20_000 });
      assert.ok(Date.now() >= newDue, 'expired no earlier than the new deadline');
      log(`shown Expired ${((Date.now() - newDue) / 1000).toFixed(1)} s after the new deadline`);
      assert.equal((await expiryEmails(url, token, id)).length, 1, 'one expiry email, at the new deadline');
    },
  },
];
