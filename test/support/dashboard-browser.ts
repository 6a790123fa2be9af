// Chromium for the dashboard's browser tests: Debian's /usr/bin/chromium
// driven by playwright-core, offline (every request that leaves the server
// under test is aborted, as on a machine without internet). Screenshots go
// to VIGIL_UI_SCREENSHOTS when set (docs/ui/ holds the committed ones),
// otherwise to a temporary folder that close() removes.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { tempDir } from './server-process.ts';

export const chromiumPath = '/usr/bin/chromium';
export const haveChromium = existsSync(chromiumPath);

export interface DashboardBrowser {
  page: Page;
  /** Where screenshots go. */
  shots: string;
  /** Errors the page reported (script errors, failed loads). */
  errors: string[];
  close(): Promise<void>;
}

export async function openDashboardBrowser(serverUrl: string): Promise<DashboardBrowser> {
  const given = process.env.VIGIL_UI_SCREENSHOTS;
  const shots = resolve(given ?? tempDir('vigil-ui-shots-'));
  mkdirSync(shots, { recursive: true });
  const profile = tempDir('vigil-chromium-');
  let context: BrowserContext | undefined;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath,
      headless: true,
      viewport: { width: 1280, height: 800 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    await context.route((url) => url.origin !== serverUrl, (route) => route.abort());
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    const opened = context;
    return {
      page,
      shots,
      errors,
      async close() {
        await opened.close();
        rmSync(profile, { recursive: true, force: true });
        if (!given) rmSync(shots, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await context?.close();
    rmSync(profile, { recursive: true, force: true });
    if (!given) rmSync(shots, { recursive: true, force: true });
    throw error;
  }
}
