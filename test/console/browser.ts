// The system Chromium (Debian's `chromium` package) driven by playwright-core, for the console suite and
// `npm run screenshots`. Nothing is downloaded: without /usr/bin/chromium the callers skip.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type ConsoleMessage, type Page } from 'playwright-core';

export const CHROMIUM = process.env.ARKIVECTOR_CHROMIUM ?? '/usr/bin/chromium';

/** Why the browser suites cannot run here, or undefined when they can. */
export const noBrowser: string | undefined = existsSync(CHROMIUM)
  ? undefined
  : `no Chromium at ${CHROMIUM}: install it with \`apt-get install -y chromium\` (or set ARKIVECTOR_CHROMIUM) to run the console suite`;

// Quiet, offline, reproducible: no sandbox (CI runs as root), no GPU, no background traffic to Google.
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Starts Chromium with a fresh profile directory, removed on close. */
export async function launchBrowser(viewport = { width: 1280, height: 860 }): Promise<Browser> {
  const profile = await mkdtemp(join(tmpdir(), 'arkivector-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport,
    timeout: 120_000,
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** What went wrong on a page: failed requests, error statuses, console messages and uncaught errors. */
export interface PageProblems {
  failedRequests: string[];
  badResponses: string[];
  console: string[];
  pageErrors: string[];
}

/**
 * Records every problem of a page. `expectStatus` lets a step declare the error answers it provokes on
 * purpose (a refused token, a filter error); anything else at 400 or above is a problem.
 */
export function watchPage(page: Page, expectStatus: (status: number, url: string) => boolean = () => false) {
  const problems: PageProblems = { failedRequests: [], badResponses: [], console: [], pageErrors: [] };
  page.on('requestfailed', (request) =>
    problems.failedRequests.push(`${request.method()} ${request.url()}: ${request.failure()?.errorText}`),
  );
  page.on('response', (response) => {
    if (response.status() >= 400 && !expectStatus(response.status(), response.url()))
      problems.badResponses.push(`${response.status()} ${response.request().method()} ${response.url()}`);
  });
  page.on('console', (message: ConsoleMessage) => {
    // An expected error answer still makes Chromium log "Failed to load resource"; it is checked above.
    if (message.type() === 'error' && /Failed to load resource/.test(message.text())) return;
    problems.console.push(`${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.pageErrors.push(error.message));
  return problems;
}
