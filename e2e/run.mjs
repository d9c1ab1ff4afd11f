// Browser tests of the whole app on one machine (`make dev`): playwright-core
// drives the system's Chromium, headless, against the local dev server.
//
// It builds nothing. It starts the server from E2E_SERVER_BIN (a binary
// built from ./cmd/dev) or, without it, with `go run ./cmd/dev`, on a free
// port with a fresh data folder and its fake clock (`-clock fake`: it runs
// with the wall clock, and the scenarios may move it ahead with `clock`);
// the web app must be built (web/dist).
// It runs the scenarios one after another, prints each one's time and a
// closing "N passed, N failed" line, and stops the server. Screenshots
// (and, on failure, the server log) go to test-results/e2e/.
//
// Environment:
//   CHROMIUM        Chromium to drive. Default: /usr/bin/chromium.
//   E2E_SERVER_BIN  prebuilt dev server. Default: go run ./cmd/dev.
//   E2E_RESULTS     results folder. Default: <repo>/test-results/e2e.
//   E2E_ONLY        run only the scenarios whose name contains this.
//   E2E_SCREENSHOTS a folder of PNGs named after scanned states (such as
//                   docs/screenshots): after a run with no failure, each is
//                   replaced by this run's screenshot of that state
//                   (`make screenshots`).

import { spawn } from 'node:child_process';
import { copyFile, mkdtemp, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

import { scenarios } from './scenarios.mjs';
import { campaignScenarios, SENDER_DOMAIN } from './campaign-scenarios.mjs';
import { campaignPageScenarios } from './campaign-page.mjs';
import { campaignUnsubscribeScenarios } from './campaign-unsubscribe.mjs';
import { a11yReport } from './a11y.mjs';
import { watchSecurity } from './security.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..');
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
const results = resolve(process.env.E2E_RESULTS || join(repo, 'test-results', 'e2e'));

const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

function freePort() {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => ok(port));
    });
  });
}

// startServer runs the dev server in its own process group (so `go run`
// and the binary it starts stop together) and resolves with its URL once
// it prints its ready line.
async function startServer(dataDir) {
  const port = await freePort();
  const args = ['-addr', `127.0.0.1:${port}`, '-data', dataDir, '-web', join(repo, 'web', 'dist'), '-allow-vite=false',
    `-campaign-senders=@${SENDER_DOMAIN}`, '-clock', 'fake'];
  const bin = process.env.E2E_SERVER_BIN;
  const [cmd, argv] = bin ? [resolve(repo, bin), args] : ['go', ['run', './cmd/dev', ...args]];
  const child = spawn(cmd, argv, { cwd: repo, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = [];
  const url = await new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`the dev server printed no URL within 180 s:\n${log.join('')}`)), 180_000);
    let buf = '';
    child.stdout.on('data', (d) => {
      log.push(String(d));
      buf += String(d);
      const m = /Unschedule dev server: (http:\/\/\S+)/.exec(buf);
      if (m) {
        clearTimeout(timer);
        ok(m[1]);
      }
    });
    child.stderr.on('data', (d) => log.push(String(d)));
    child.on('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`the dev server exited (${code}) before it was ready:\n${log.join('')}`));
    });
  });
  const exited = new Promise((ok) => child.on('exit', ok));
  return {
    url,
    log,
    async stop() {
      if (child.exitCode !== null) return;
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        return;
      }
      const t = setTimeout(() => {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }, 10_000);
      await exited;
      clearTimeout(t);
    },
  };
}

/**
 * The dev server's fake clock (internal/tooling/devserver/devclock.go): now() reads
 * it, advance(s) moves it s seconds ahead, advanceTo(ms) to an instant (if
 * ahead); each resolves with the server's time (ms) once what became due
 * has run. It runs ahead of this process's and the browser's clocks once
 * moved, so only scenarios that run after every task scenario move it.
 */
function serverClock(url) {
  const read = async (res) => {
    const body = await res.json();
    if (res.status !== 200) throw new Error(`dev server clock: ${res.status} ${JSON.stringify(body)}`);
    return Date.parse(body.now);
  };
  const clock = {
    now: async () => read(await fetch(`${url}/__dev/clock`)),
    advance: async (seconds) =>
      read(await fetch(`${url}/__dev/clock/advance`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ seconds }) })),
    async advanceTo(ms) {
      const now = await clock.now();
      return ms > now ? clock.advance((ms - now) / 1000) : now;
    },
  };
  return clock;
}

async function main() {
  if (!existsSync(chromiumPath)) {
    console.error(`e2e: no Chromium at ${chromiumPath} (install the chromium package, or set CHROMIUM)`);
    process.exit(1);
  }
  if (!existsSync(join(repo, 'web', 'dist', 'index.html'))) {
    console.error('e2e: the web app is not built: run `cd web && npm ci && npm run build` (make e2e does it)');
    process.exit(1);
  }
  await rm(results, { recursive: true, force: true }); // this run's results only
  await mkdir(results, { recursive: true });
  const dataDir = await mkdtemp(join(tmpdir(), 'unschedule-e2e-data-'));
  const profile = await mkdtemp(join(tmpdir(), 'unschedule-e2e-profile-'));
  const t0 = Date.now();
  const server = await startServer(dataDir);
  console.log(`e2e: dev server at ${server.url} (ready in ${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  let context;
  let security;
  let passed = 0;
  let failed = 0;
  const timings = [];
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath,
      headless: true,
      args: CHROMIUM_FLAGS,
      timezoneId: 'Europe/Berlin', // not UTC: the form's local time must be converted
      viewport: { width: 1100, height: 900 },
    });
    console.log(`e2e: Chromium ${context.browser()?.version() ?? ''} ready (${((Date.now() - t0) / 1000).toFixed(1)} s since start)`);
    security = await watchSecurity(context, server.url);
    const only = process.env.E2E_ONLY || '';
    for (const sc of [...scenarios, ...campaignScenarios, ...campaignPageScenarios, ...campaignUnsubscribeScenarios].filter((s) => s.name.includes(only))) {
      const page = await context.newPage(); // a new tab: signed out (the token is in sessionStorage)
      page.setDefaultTimeout(15_000);
      const start = Date.now();
      const slug = sc.name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
      security.begin();
      try {
        await sc.run({ page, url: server.url, results, clock: serverClock(server.url), log: (msg) => console.log(`    ${msg}`) });
        const problems = await security.end();
        if (problems.length) throw new Error(`security headers or CSP: ${problems.length} problems:\n${problems.join('\n')}`);
        const secs = (Date.now() - start) / 1000;
        await page.screenshot({ path: join(results, `${slug}.png`), fullPage: true });
        console.log(`ok   ${sc.name} (${secs.toFixed(1)} s)`);
        timings.push([sc.name, secs, 'ok']);
        passed++;
      } catch (err) {
        const secs = (Date.now() - start) / 1000;
        const shot = join(results, `${slug}-failure.png`);
        await page.screenshot({ path: shot, fullPage: true }).catch(() => {});
        console.log(`FAIL ${sc.name} (${secs.toFixed(1)} s)\n     ${String(err?.stack || err).replace(/\n/g, '\n     ')}\n     screenshot: ${shot}`);
        timings.push([sc.name, secs, 'FAIL']);
        failed++;
      } finally {
        await page.close();
      }
    }
  } finally {
    const t1 = Date.now();
    await context?.close().catch(() => {});
    await server.stop();
    console.log(`e2e: browser and server stopped in ${((Date.now() - t1) / 1000).toFixed(1)} s`);
    if (failed > 0) {
      const logPath = join(results, 'server.log');
      await writeFile(logPath, server.log.join(''));
      console.log(`e2e: server log: ${logPath}`);
    }
    await rm(dataDir, { recursive: true, force: true });
    await rm(profile, { recursive: true, force: true });
  }
  if (security) {
    const t = security.totals();
    await writeFile(join(results, 'security.json'), JSON.stringify(t, null, 2));
    console.log(`e2e: security headers on ${t.documents.length} pages (${t.documents.join(', ')}) and ${t.routes.length} routes, nosniff on ${t.responses} answers: ${t.violations} CSP violations`);
    if (passed > 0 && t.documents.length === 0) {
      console.log('FAIL security check: no page of the dev server was loaded, so no header was checked');
      failed++;
    }
  }
  await writeFile(join(results, 'a11y.json'), JSON.stringify(a11yReport, null, 2));
  console.log(`e2e: axe-core (WCAG 2.2 AA) scanned ${a11yReport.length} states: ${a11yReport.reduce((n, r) => n + r.violations.length, 0)} violations`);
  await writeFile(join(results, 'timings.json'), JSON.stringify(timings.map(([name, s, r]) => ({ name, seconds: s, result: r })), null, 2));
  console.log(`e2e: screenshots in ${results}`);
  if (process.env.E2E_SCREENSHOTS) failed += await refreshScreenshots(resolve(repo, process.env.E2E_SCREENSHOTS), failed);
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed > 0 || passed === 0 ? 1 : 0);
}

// refreshScreenshots replaces each PNG of dir with this run's screenshot
// of the state of that name, only after a run with no failure (a failed
// run's pages are not the app's). A PNG that no scenario took this run is
// reported, and counts as a failure unless E2E_ONLY left scenarios out.
async function refreshScreenshots(dir, failed) {
  if (failed > 0) {
    console.log(`e2e: ${dir} left as it was: the run failed`);
    return 0;
  }
  const taken = new Set(a11yReport.map((r) => `${r.state}.png`));
  const pngs = (await readdir(dir)).filter((f) => f.endsWith('.png'));
  const missing = pngs.filter((f) => !taken.has(f));
  for (const f of pngs.filter((f) => taken.has(f))) await copyFile(join(results, f), join(dir, f));
  console.log(`e2e: refreshed ${pngs.length - missing.length} screenshots in ${dir}`);
  if (missing.length === 0) return 0;
  console.log(`${process.env.E2E_ONLY ? 'e2e: not taken this run' : 'FAIL screenshots: no scenario took'}: ${missing.join(', ')}`);
  return process.env.E2E_ONLY ? 0 : 1;
}

main().catch((err) => {
  console.error(err);
  console.log('0 passed, 1 failed');
  process.exit(1);
});
