// An axe-core scan of the page as it is, with the WCAG 2.0/2.1/2.2 A and AA
// rules, evaluated in the page by playwright-core. A state with violations fails its
// scenario; every scanned state is listed in test-results/e2e/a11y.json.

import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const axeSource = await readFile(require.resolve('axe-core/axe.min.js'), 'utf8');

export const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

/** Every scanned state: { state, url, violations: [{ id, impact, nodes }] }. */
export const a11yReport = [];

/**
 * Scans the page with axe-core and saves a screenshot as <state>.png in
 * results; throws when axe finds a violation.
 */
export async function checkState(page, results, state) {
  // Evaluated through the debugging protocol, not added as an inline
  // <script>, which the page's Content-Security-Policy blocks.
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(`${axeSource}\n;undefined`);
  const res = await page.evaluate((tags) => window.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] }), WCAG_TAGS);
  const violations = res.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 5) }));
  a11yReport.push({ state, url: page.url(), violations });
  await page.screenshot({ path: join(results, `${state}.png`), fullPage: false });
  if (violations.length) {
    throw new Error(`axe-core: ${violations.length} WCAG 2.2 AA violations in state "${state}":\n${JSON.stringify(violations, null, 2)}`);
  }
}
