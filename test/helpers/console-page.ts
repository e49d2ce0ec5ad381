/**
 * The web console in a real browser, as the console tests drive it: open it,
 * read a tab's text from its xterm buffer, type into it, take screenshots.
 */
import { copyFileSync, mkdirSync } from "node:fs";
import type { Browser, BrowserContextOptions, Page } from "playwright-core";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchBrowser } from "./browser.js";

// The console's shells are login shells, started by the test's own daemon with this process's environment: with
// the machine's HOME they read its dotfiles, and one that runs `pyenv init` left a lock behind when a test ended
// the shell mid-rehash, after which every login shell waited 60 s. Console tests give their shells a home of their own.
// One shared, empty home (the shells may leave a history there), so that nothing is left per run.
process.env.HOME = join(tmpdir(), "execmux-console-home");
mkdirSync(process.env.HOME, { recursive: true });

export const httpOf = (wsUrl: string) => wsUrl.replace(/^ws/, "http");

interface ConsoleWindow {
  execmuxConsole: {
    tabs: { text(): string; title: string; terminal: { cols: number; rows: number } }[];
    app: unknown;
  };
}

export interface OpenOptions extends BrowserContextOptions {
  /** Path under the daemon's URL; default "/console/". */
  path?: string;
  browser?: Browser;
  /** "dark" (default) or "light": the console's theme, set before it loads. */
  theme?: "dark" | "light";
  /** False: only make the page, for a test that sets routes first. */
  navigate?: boolean;
}

/** Opens the console of the daemon at `wsUrl` in a fresh context (no saved state). */
export async function openConsole(wsUrl: string, options: OpenOptions = {}): Promise<Page> {
  const { path = "/console/", browser, theme = "dark", navigate = true, ...contextOptions } = options;
  const context = await (browser ?? (await launchBrowser())).newContext({ viewport: { width: 1100, height: 640 }, ...contextOptions });
  await context.addInitScript((chosen) => {
    if (!localStorage.getItem("execmux.console.settings")) localStorage.setItem("execmux.console.settings", JSON.stringify({ theme: chosen, fontSize: 14 }));
  }, theme);
  const page = await context.newPage();
  if (navigate) await page.goto(`${httpOf(wsUrl)}${path}`);
  return page;
}

export const waitConnected = (page: Page) => page.locator("#status.connected").waitFor({ timeout: 20_000 });

/** Connected, and the first tab (the shell the console opens by itself) is there. */
export async function waitReady(page: Page): Promise<void> {
  await waitConnected(page);
  await page.waitForFunction(() => (window as unknown as ConsoleWindow).execmuxConsole.tabs.length > 0);
}

export const tabCount = (page: Page) => page.evaluate(() => (window as unknown as ConsoleWindow).execmuxConsole.tabs.length);

/** Text of tab `index`, from its xterm buffer. */
export const tabText = (page: Page, index: number) => page.evaluate((i) => (window as unknown as ConsoleWindow).execmuxConsole.tabs[i]!.text(), index);

export const tabTitles = (page: Page) => page.locator(".tab .tab-label").allTextContents();

/** Opens a tab running `command` (through the command field) and waits for it. */
export async function newTab(page: Page, command: string): Promise<void> {
  const before = await tabCount(page);
  await page.fill("#command", command);
  await page.press("#command", "Enter");
  await page.waitForFunction((count) => (window as unknown as ConsoleWindow).execmuxConsole.tabs.length > count, before);
}

/** Types a line into tab `index` and presses Enter. */
export async function typeInto(page: Page, index: number, line: string): Promise<void> {
  await page.locator(".tab").nth(index).click();
  await page.locator(".terminal-pane.active .xterm-helper-textarea").focus();
  await page.keyboard.type(line);
  await page.keyboard.press("Enter");
}

/**
 * Saves a screenshot under test-artifacts/console/. The pictures
 * docs/console.md shows pass `{ docs: true }`: with EXECMUX_SCREENSHOTS=docs
 * they are also written to docs/console/<name>.png.
 */
export async function screenshot(page: Page, name: string, options: { docs?: boolean; alsoAs?: string } = {}): Promise<void> {
  mkdirSync("test-artifacts/console", { recursive: true });
  const path = `test-artifacts/console/${name}.png`;
  // No blinking cursor caught half-drawn, no hover left over.
  await page.mouse.move(0, 0);
  await page.screenshot({ path, animations: "disabled", caret: "hide" });
  if (options.docs && process.env.EXECMUX_SCREENSHOTS === "docs") {
    mkdirSync("docs/console", { recursive: true });
    copyFileSync(path, `docs/console/${name}.png`);
    if (options.alsoAs) copyFileSync(path, options.alsoAs);
  }
}
