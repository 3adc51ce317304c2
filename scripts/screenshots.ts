// `npm run screenshots`: starts `arkivector serve` on the demo devnet, opens each console page in the
// system Chromium and writes docs/console-*.png (shown in docs/console.md). Needs /usr/bin/chromium.
import { mkdir } from 'node:fs/promises';
import { createLogger, startGateway } from '../src/node/index.ts';
import { demoNodeConfig, guardedNodeConfig } from '../test/helpers/screenshotNodes.ts';
import { launchBrowser, noBrowser, watchPage } from '../test/console/browser.ts';

if (noBrowser) {
  process.stderr.write(`${noBrowser}\n`);
  process.exit(1);
}

const OUT = new URL('../docs/', import.meta.url);
/** Status samples the overview chart should hold before its picture is taken (one per 2 s). */
const CHART_SAMPLES = 20;
const WAIT = { timeout: 120_000 };

await mkdir(OUT, { recursive: true });
const gateway = await startGateway(demoNodeConfig(), createLogger('silent'));
const browser = await launchBrowser({ width: 1200, height: 760 });
try {
  const page = await browser.context.newPage();
  const problems = watchPage(page);
  const shot = (name: string) => page.screenshot({ path: new URL(`console-${name}.png`, OUT).pathname });

  await page.goto(`${gateway.httpUrl}/`);
  await page.locator('[data-field=as_of_block]').filter({ hasText: /^\d+$/ }).waitFor(WAIT);
  // Let the chart fill a little: wait for the polls, not for a fixed time.
  for (let i = 0; i < CHART_SAMPLES; i++) await page.waitForResponse((r) => r.url().endsWith('/v1/status'), WAIT);
  await shot('overview');

  await page.click('nav a[data-nav=collections]');
  await page.locator('tr[data-collection="demo.docs"]').waitFor(WAIT);
  await shot('collections');

  await page.locator('tr[data-collection="demo.docs"] a').click();
  await page.locator('[data-field=column]').waitFor(WAIT);
  await page.fill('textarea[name=query]', '[1, 0, 0, 0, 0, 0, 0, 0]');
  await page.fill('input[name=where]', "rank < 60 && topic = 'astronomy'");
  await page.fill('input[name=k]', '5');
  await page.click('form.search button[type=submit]');
  await page.locator('[data-field=answer]').waitFor(WAIT);
  await page.screenshot({ path: new URL('console-search.png', OUT).pathname, fullPage: true });

  await page.locator('[data-result="0"] a').click();
  await page.locator('[data-field=owner]').waitFor(WAIT);
  await shot('entity');

  await page.click('nav a[data-nav=connect]');
  await page.locator('pre.snippet').first().waitFor(WAIT);
  await page.screenshot({ path: new URL('console-connect.png', OUT).pathname, fullPage: true });

  // The token prompt, from a second node on the same chain that requires tokens.
  const guarded = await startGateway(guardedNodeConfig(gateway.rpc), createLogger('silent'));
  try {
    const prompt = await browser.context.newPage();
    await prompt.goto(`${guarded.httpUrl}/`);
    await prompt.locator('form.token').waitFor(WAIT);
    await prompt.screenshot({ path: new URL('console-token.png', OUT).pathname });
    await prompt.close();
  } finally {
    await guarded.close();
  }

  const all = Object.values(problems).flat();
  if (all.length) throw new Error(`the console had problems:\n${all.join('\n')}`);
  process.stdout.write(`screenshots written to ${OUT.pathname}\n`);
} finally {
  await browser.close();
  await gateway.close();
}
