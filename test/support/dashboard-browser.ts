// Chromium for the dashboard's browser tests: Debian's /usr/bin/chromium
// driven by playwright-core, offline (every request that leaves the server
// under test is aborted, as on a machine without internet). Screenshots go
// to VIGIL_UI_SCREENSHOTS when set (docs/ui/ holds the committed ones),
// otherwise to a temporary folder that close() removes.
import { mkdirSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { type RunningServer, type ServerOptions, startServer } from '../../src/server.ts';
import { chromiumPath } from './requirements.ts';
import { tempDir } from './server-process.ts';

export { chromiumPath };

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

export interface DashboardSession {
  readonly server: RunningServer;
  /** `${server.url}/mp/v0` */
  readonly base: string;
  readonly browser: DashboardBrowser;
  readonly page: Page;
  /**
   * At a phone's width (390 px): waits until `fits` holds in the page (by default, nothing runs off
   * to the side), takes the screenshot `<shot>.png` when named, then goes back to the desktop width.
   */
  atPhoneWidth(shot?: string, fits?: () => boolean): Promise<void>;
}

const nothingRunsOff = () => document.documentElement.scrollWidth <= 390;

/**
 * Call inside a describe block: an in-process server with `admin` as its admin token, and Chromium
 * on its dashboard, made before the block's tests and closed after them. The fields are set once the
 * block's first hook ran.
 */
export function dashboardInChromium(admin: string, options: ServerOptions = {}): DashboardSession {
  const session = {
    async atPhoneWidth(shot?: string, fits: () => boolean = nothingRunsOff) {
      await session.page.setViewportSize({ width: 390, height: 844 });
      await session.page.waitForFunction(fits);
      if (shot) await session.page.screenshot({ path: `${session.browser.shots}/${shot}.png`, fullPage: true });
      await session.page.setViewportSize({ width: 1280, height: 800 });
    },
  } as DashboardSession & { server: RunningServer; base: string; browser: DashboardBrowser; page: Page };
  beforeAll(async () => {
    session.server = await startServer({ port: 0, cloud: false, allowAdmin: admin, log: () => undefined, ...options });
    session.base = `${session.server.url}/mp/v0`;
    session.browser = await openDashboardBrowser(session.server.url);
    session.page = session.browser.page;
  });
  afterAll(async () => {
    await session.browser?.close();
    await session.server?.close();
  });
  return session;
}
