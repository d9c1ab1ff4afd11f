// The security check every scenario gets from the harness (run.mjs): each
// page the browser loads from the dev server carries the security headers
// (internal/todo/webheaders: the dev server sends what Amplify sends), every
// other answer of the server says nosniff, and no page reports a
// Content-Security-Policy violation (a console error, or a
// securitypolicyviolation event) across all scenarios.

/** Checks of a document's headers: name → a test of its value (lower-case names). */
const DOCUMENT_HEADERS = {
  'content-security-policy': (v) =>
    ["default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "connect-src 'self'"].every((d) => v.includes(d)) &&
    !v.includes("'unsafe-inline'") &&
    !v.includes("'unsafe-eval'"),
  'strict-transport-security': (v) => /^max-age=\d{8,}/.test(v),
  'x-content-type-options': (v) => v === 'nosniff',
  'x-frame-options': (v) => v === 'DENY',
  'referrer-policy': (v) => v === 'no-referrer',
};

// The campaign unsubscribe page (internal/campaigns/unsubscribe, served by
// the API in AWS, not by the app's hosting) has its own, stricter policy:
// nothing loads (default-src 'none', so no script at all), its one inline
// style block only, and its form posts back to itself.
const UNSUBSCRIBE_PATH = '/unsubscribe';
const UNSUBSCRIBE_HEADERS = {
  ...DOCUMENT_HEADERS,
  'content-security-policy': (v) =>
    ["default-src 'none'", "form-action 'self'"].every((d) => v.includes(d)) && !v.includes('script-src') && !v.includes("'unsafe-eval'"),
};

/** The header checks of the document at path. */
const documentRules = (path) => (path === UNSUBSCRIBE_PATH ? UNSUBSCRIBE_HEADERS : DOCUMENT_HEADERS);

// Chromium keeps no Strict-Transport-Security in its HTTP cache, so a page
// loaded again from the cache shows none there: the browser's view is
// checked for the others, and each page is also fetched afresh from here
// (freshFetch) and checked for all of them.
const BROWSER_HEADERS = Object.keys(DOCUMENT_HEADERS).filter((n) => n !== 'strict-transport-security');

/** What a header check says about headers h: the names that fail. */
function badHeaders(h, names, rules = DOCUMENT_HEADERS) {
  return names.filter((n) => h[n] === undefined || !rules[n](h[n])).map((n) => `${n}: ${h[n] ?? '(missing)'}`);
}

/**
 * Watches every page of context (those open now and those opened later,
 * also by a scenario). Call begin() before a scenario and end() after it:
 * end resolves with the problems seen meanwhile (empty when all is well).
 * totals() counts what was checked in the whole run.
 */
export async function watchSecurity(context, serverUrl) {
  const origin = new URL(serverUrl).origin;
  let problems = [];
  let pending = [];
  const documents = new Set();
  const routes = new Set();
  let violations = 0;
  let responses = 0;
  let fresh = new Set(); // pages loaded in this scenario

  /** GETs each page of fresh from the server and checks all its headers. */
  async function freshFetch() {
    for (const path of fresh) {
      const res = await fetch(origin + path, { redirect: 'manual' });
      await res.arrayBuffer();
      const bad = badHeaders(Object.fromEntries(res.headers), Object.keys(DOCUMENT_HEADERS), documentRules(new URL(origin + path).pathname));
      if (bad.length) problems.push(`GET ${path} (${res.status}, fetched afresh): ${bad.join('; ')}`);
    }
  }

  // A CSP violation in any page, reported by the page itself. The binding
  // and the init script come from the browser's debugging protocol, which
  // the page's policy does not govern.
  await context.exposeBinding('__e2eCspViolation', ({ page }, v) => {
    violations++;
    problems.push(`CSP violation on ${page.url()}: ${v.directive} blocked ${v.blocked || '(inline)'} at ${v.source}:${v.line}`);
  });
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) =>
      window.__e2eCspViolation({ directive: e.effectiveDirective, blocked: e.blockedURI, source: e.sourceFile, line: e.lineNumber }),
    );
  });

  function watch(page) {
    page.on('console', (msg) => {
      if (/Content[ -]Security[ -]Policy/i.test(msg.text())) {
        violations++;
        problems.push(`CSP message in the console of ${page.url()}: ${msg.text()}`);
      }
    });
    page.on('framenavigated', (frame) => {
      if (frame !== page.mainFrame()) return;
      const u = new URL(frame.url());
      // One route per path and hash route, ids left out.
      if (u.origin === origin) routes.add(u.pathname + u.hash.replace(/\/[^/]*[0-9][^/]*$/, '/:id'));
    });
    page.on('response', (res) => {
      if (new URL(res.url()).origin !== origin) return;
      const req = res.request();
      const isDocument = req.isNavigationRequest() && req.frame() === page.mainFrame();
      pending.push(
        res.allHeaders().then(
          (h) => {
            responses++;
            const names = isDocument ? BROWSER_HEADERS : ['x-content-type-options'];
            if (isDocument) {
              documents.add(new URL(res.url()).pathname);
              fresh.add(new URL(res.url()).pathname);
            }
            const bad = badHeaders(h, names, documentRules(new URL(res.url()).pathname));
            if (bad.length) problems.push(`${req.method()} ${res.url()} (${res.status()}): ${bad.join('; ')}`);
          },
          () => {}, // the page closed before its headers were read
        ),
      );
    });
  }
  context.pages().forEach(watch);
  context.on('page', watch);

  return {
    begin() {
      problems = [];
      pending = [];
      fresh = new Set();
    },
    async end() {
      await Promise.all(pending);
      await freshFetch();
      return problems;
    },
    totals() {
      return { documents: [...documents].sort(), routes: [...routes].sort(), responses, violations };
    },
  };
}
