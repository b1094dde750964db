/**
 * Headless Debian Chromium for the browser tests (/docs, the console, the front door, another origin), driven by
 * playwright-core with the flags this machine needs (no browser is ever downloaded; no background networking), with
 * a watch on every page for requests to another host, Content-Security-Policy violations and script errors.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const browserMissing = !existsSync(CHROMIUM);
export const browserRequired = process.env.PLANTSTORE_REQUIRE_BROWSER === '1';

export interface Browser {
  readonly context: BrowserContext;
  /** A new tab, watched. */
  newPage(): Promise<Page>;
  readonly foreignRequests: string[];
  readonly policyViolations: string[];
  readonly pageErrors: string[];
  close(): Promise<void>;
}

export async function launchBrowser(
  origin: string,
  options: { colorScheme?: 'light' | 'dark'; viewport?: { width: number; height: number } } = {},
): Promise<Browser> {
  const userDataDir = mkdtempSync(join(tmpdir(), 'plantstore-console-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: options.viewport ?? { width: 1280, height: 900 },
    colorScheme: options.colorScheme ?? 'light',
  });
  const foreignRequests: string[] = [];
  const policyViolations: string[] = [];
  const pageErrors: string[] = [];
  const watch = (page: Page) => {
    page.on('request', (request) => {
      const url = request.url();
      if (!url.startsWith(`${origin}/`) && !url.startsWith('data:') && !url.startsWith('blob:'))
        foreignRequests.push(url);
    });
    page.on('console', (message) => {
      if (/Content[- ]Security[- ]Policy/i.test(message.text())) policyViolations.push(message.text());
    });
    page.on('pageerror', (error) => pageErrors.push(error.message));
  };
  for (const page of context.pages()) watch(page);
  return {
    context,
    async newPage() {
      const page = await context.newPage();
      watch(page);
      return page;
    },
    foreignRequests,
    policyViolations,
    pageErrors,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: number;
}

/** axe-core's serious and critical violations on the page as it is now (evaluated by the debugger, not by the CSP). */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: {
          run(): Promise<{ violations: { id: string; impact: string | null; help: string; nodes: unknown[] }[] }>;
        };
      }
    ).axe;
    const result = await axe.run();
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
