/**
 * Debian's Chromium driven by playwright-core, closed after each test. A
 * missing Chromium fails the test that needs it, saying how to install it:
 * the browser tests never pass by being skipped.
 */
import { existsSync } from "node:fs";
import { afterEach } from "vitest";
import { chromium, type Browser } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

const browsers: Browser[] = [];
afterEach(async () => {
  await Promise.all(browsers.splice(0).map((browser) => browser.close()));
});

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: the browser tests need Debian's Chromium (node scripts/ensure-debian-packages.mjs installs it, or apt-get install chromium)`);
  }
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"],
  });
  browsers.push(browser);
  return browser;
}
