// The web app keeps its local session in this tab's sessionStorage under
// this key (web/src/auth/local.ts); signing in here keeps it there too.
const KEY = 'unschedule.localSession';
const form = document.getElementById('signin');
const mail = document.getElementById('mail');
let timer = 0;

function session() {
  try {
    const s = JSON.parse(sessionStorage.getItem(KEY) || 'null');
    return s && typeof s.idToken === 'string' && s.idToken ? s : null;
  } catch {
    return null;
  }
}

function el(tag, text, attrs) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text; // never parsed as HTML
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

function when(iso) {
  return new Date(iso).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

function render(emails) {
  mail.replaceChildren();
  if (emails.length === 0) {
    mail.append(el('p', 'No email yet.', { 'data-testid': 'outbox-empty' }));
    return;
  }
  const table = el('table');
  const head = el('tr');
  for (const h of ['#', 'When', 'Kind', 'To', 'Subject', 'Body']) head.append(el('th', h));
  table.append(el('thead'), el('tbody'));
  table.tHead.append(head);
  for (const m of emails.slice().reverse()) {
    const tr = el('tr', undefined, { 'data-testid': 'outbox-email', 'data-task-id': m.taskId || '' });
    const to = m.to && m.to.length ? el('td', m.to.join(', ')) : el('td');
    if (!m.to || !m.to.length) to.append(el('em', 'nobody (no confirmed subscription)'));
    const body = el('td');
    // The message's own headers as the mail carries them (a campaign
    // email's List-Unsubscribe and List-Unsubscribe-Post).
    if (m.headers && m.headers.length) {
      body.append(el('pre', m.headers.map((h) => `${h.name}: ${h.value}`).join('\n'), { class: 'headers', 'data-testid': 'outbox-headers' }));
    }
    body.append(el('pre', m.body));
    if (m.kind === 'campaign') body.append(feedbackButtons(m));
    tr.append(el('td', String(m.seq)), el('td', when(m.at)), el('td', m.kind), to, el('td', m.subject), body);
    table.tBodies[0].append(tr);
  }
  mail.append(table);
}

// feedbackButtons make a campaign email bounce for good or draw a
// complaint, as the recipient's mail server would: the server hands SES's
// event to the bounce function's handler, which suppresses the address.
function feedbackButtons(m) {
  const p = el('p', undefined, { class: 'feedback' });
  for (const [kind, label] of [['bounce', 'Bounce'], ['complaint', 'Complaint']]) {
    const b = el('button', label, { type: 'button', 'data-testid': `outbox-${kind}`, 'aria-label': `${label}: email #${m.seq} to ${(m.to || []).join(', ')}` });
    b.addEventListener('click', () => feedback(m, kind).catch((err) => status(String(err))));
    p.append(b, ' ');
  }
  return p;
}

async function feedback(m, kind) {
  const s = session();
  if (!s) return signedOut();
  const res = await fetch(`/outbox/${m.seq}/${kind}`, { method: 'POST', headers: { Authorization: s.idToken, Accept: 'application/json' } });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) return status(body.message || `${kind}: HTTP ${res.status}`);
  status(`Email #${m.seq}: ${body.event} sent to the bounce handler; ${(body.suppressed || []).join(', ')} suppressed for later sends.`);
}

function status(text) {
  document.getElementById('status').textContent = text;
}

function signedOut(message) {
  clearInterval(timer);
  timer = 0;
  sessionStorage.removeItem(KEY);
  mail.replaceChildren();
  document.getElementById('who').textContent = '';
  document.getElementById('error').textContent = message || '';
  form.hidden = false;
}

async function load() {
  const s = session();
  if (!s) return signedOut();
  const res = await fetch('/outbox.json', { headers: { Authorization: s.idToken, Accept: 'application/json' } });
  if (res.status === 401) return signedOut('Your sign-in expired: sign in again.');
  if (!res.ok) throw new Error(`outbox: HTTP ${res.status}`);
  form.hidden = true;
  document.getElementById('who').textContent = `Signed in as ${s.email}.`;
  render((await res.json()).emails);
  if (!timer) timer = setInterval(() => load().catch(() => {}), 5000);
}

form.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const email = form.elements.email.value.trim();
  const res = await fetch('/local-auth/signin', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify({ email, password: form.elements.password.value }),
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok || !body.idToken) {
    document.getElementById('error').textContent = body.message || `Sign-in failed (HTTP ${res.status}).`;
    return;
  }
  sessionStorage.setItem(KEY, JSON.stringify({ email, idToken: body.idToken }));
  form.reset();
  await load();
});

load().catch((err) => {
  document.getElementById('error').textContent = String(err);
});
