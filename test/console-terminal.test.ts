/**
 * The console's terminal in real Chromium: titles, search, links, Unicode
 * widths, copy and paste, the tab shortcuts, theme and font size.
 */
import { describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { startTestDaemon } from "./helpers/daemon.js";
import { newTab, openConsole, screenshot, tabCount, tabText, tabTitles, waitReady } from "./helpers/console-page.js";

interface TerminalWindow {
  execmuxConsole: {
    app: { active: { source: { processId: string } } | undefined };
    tabs: {
      terminal: {
        cols: number;
        rows: number;
        options: { fontSize: number; theme: { background: string } };
        buffer: { active: { viewportY: number; getLine(y: number): { getCell(x: number): { getChars(): string; getWidth(): number } | undefined } | undefined } };
      };
      text(): string;
    }[];
  };
}

/** The page position of a cell of the active terminal (viewport row and column). */
async function cellCenter(page: Page, column: number, row: number): Promise<{ x: number; y: number }> {
  const box = (await page.locator(".terminal-pane.active .xterm-screen").boundingBox())!;
  const { cols, rows } = await page.evaluate(() => {
    const tab = (window as unknown as TerminalWindow).execmuxConsole.tabs.find((_, index, all) => all[index] && document.querySelector(".terminal-pane.active"))!;
    return { cols: tab.terminal.cols, rows: tab.terminal.rows };
  });
  return { x: box.x + ((column + 0.5) * box.width) / cols, y: box.y + ((row + 0.5) * box.height) / rows };
}

/** Viewport row and column where `text` starts in tab `index`, searching from the bottom. */
async function findOnScreen(page: Page, index: number, text: string): Promise<{ column: number; row: number }> {
  const { lines, top } = await page.evaluate((i) => {
    const tab = (window as unknown as TerminalWindow).execmuxConsole.tabs[i]!;
    return { lines: tab.text().split("\n"), top: tab.terminal.buffer.active.viewportY };
  }, index);
  for (let line = lines.length - 1; line >= 0; line--) {
    const column = lines[line]!.indexOf(text);
    if (column >= 0 && !lines[line]!.includes("printf")) return { column, row: line - top };
  }
  throw new Error(`${text} is not on screen`);
}

/** A shell without rc files, its prompt plain. */
const SHELL = "PS1='$ ' bash --norc --noprofile -i";

describe("the console's terminal", () => {
  it("titles tabs with the process's own title, else its command", async () => {
    const daemon = await startTestDaemon();
    const page = await openConsole(daemon.url);
    await waitReady(page);
    await newTab(page, "sleep 600");
    await newTab(page, String.raw`printf '\033]0;build: 3 of 7\007'; sleep 600`);
    await expect.poll(() => tabTitles(page)).toEqual(["bash", "sleep 600", "build: 3 of 7"]);
  });

  it("finds text in the output with match counts, opens web links, and measures emoji with Unicode 11 widths", async () => {
    const daemon = await startTestDaemon();
    const page = await openConsole(daemon.url);
    await waitReady(page);
    await newTab(page, String.raw`for i in 1 2 3; do echo "alpha beta $i"; done; echo gamma; echo 'docs at https://example.test/guide'; printf '\360\237\216\211|\n'; sleep 600`);
    await expect.poll(() => tabText(page, 1)).toContain("docs at https://example.test/guide");

    // Search: Ctrl+Shift+F, then type; Enter goes to the next match.
    await page.keyboard.press("Control+Shift+F");
    const find = page.locator(".search-bar input");
    await find.waitFor();
    await find.fill("beta");
    await expect.poll(() => page.locator(".search-count").textContent()).toMatch(/^\d of 3$/);
    const first = await page.locator(".search-count").textContent();
    await find.press("Enter");
    await expect.poll(() => page.locator(".search-count").textContent()).not.toBe(first);
    await screenshot(page, "search");
    await find.press("Escape");
    expect(await page.locator(".search-bar").isHidden()).toBe(true);

    // The emoji takes two cells (Unicode 11); with the default tables it would take one and "|" would be in cell 1.
    const { row: emojiRow } = await findOnScreen(page, 1, "|");
    const cells = await page.evaluate((row) => {
      const terminal = (window as unknown as TerminalWindow).execmuxConsole.tabs[1]!.terminal;
      const line = terminal.buffer.active.getLine(terminal.buffer.active.viewportY + row)!;
      return [line.getCell(0)!.getWidth(), line.getCell(2)!.getChars()];
    }, emojiRow);
    expect(cells).toEqual([2, "|"]);

    // A URL in the output opens in a new browser tab when clicked.
    const link = await findOnScreen(page, 1, "https://example.test/guide");
    const at = await cellCenter(page, link.column + 5, link.row);
    await page.mouse.move(at.x, at.y);
    await page.locator(".xterm-cursor-pointer").waitFor();
    // Answered here: the machine has no way out.
    await page.context().route("https://example.test/**", (route) => route.fulfill({ body: "the guide", contentType: "text/plain" }));
    const [opened] = await Promise.all([page.context().waitForEvent("page"), page.mouse.click(at.x, at.y)]);
    await expect.poll(() => opened.url()).toBe("https://example.test/guide");
  });

  it("copies the selection with Ctrl+C (and without one, interrupts) and pastes with Ctrl+V", async () => {
    const daemon = await startTestDaemon();
    const page = await openConsole(daemon.url, { permissions: ["clipboard-read", "clipboard-write"] });
    await waitReady(page);
    await newTab(page, SHELL);
    await page.keyboard.type("echo copy-me-$((40+2))\n");
    await expect.poll(() => tabText(page, 1)).toMatch(/^copy-me-42$/m);

    const word = await findOnScreen(page, 1, "copy-me-42");
    const at = await cellCenter(page, word.column + 2, word.row);
    await page.mouse.dblclick(at.x, at.y);
    await page.keyboard.press("Control+C");
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe("copy-me-42");

    // Without a selection Ctrl+C is the terminal's: it interrupts.
    await page.keyboard.type("sleep 600");
    await page.keyboard.press("Enter");
    await page.keyboard.press("Control+C");
    await page.keyboard.type("echo after-$((1+1))\n");
    await expect.poll(() => tabText(page, 1), { message: "the shell runs the next command" }).toMatch(/^after-2$/m);

    await page.evaluate(() => navigator.clipboard.writeText("echo pasted-$((6*7))"));
    await page.keyboard.press("Control+V");
    await page.keyboard.press("Enter");
    await expect.poll(() => tabText(page, 1)).toMatch(/^pasted-42$/m);
  });

  it("switches, opens and closes tabs from the keyboard, and changes theme and font size", async () => {
    const daemon = await startTestDaemon();
    const page = await openConsole(daemon.url, { theme: "dark" });
    await waitReady(page);
    await newTab(page, "sleep 600");
    await newTab(page, "sleep 601");
    const activeProcess = () => page.evaluate(() => (window as unknown as TerminalWindow).execmuxConsole.app.active?.source.processId);
    const processIds = await page.locator(".tab").evaluateAll((tabs) => tabs.map((tab) => (tab as HTMLElement).dataset.processId));

    await page.keyboard.press("Alt+1");
    expect(await activeProcess()).toBe(processIds[0]);
    await page.keyboard.press("Alt+Shift+ArrowRight");
    expect(await activeProcess()).toBe(processIds[1]);
    await page.keyboard.press("Alt+Shift+ArrowLeft");
    await page.keyboard.press("Alt+Shift+ArrowLeft");
    expect(await activeProcess()).toBe(processIds[2]);
    await page.keyboard.press("Alt+Shift+T");
    await expect.poll(() => tabCount(page)).toBe(4);
    await page.keyboard.press("Alt+Shift+W");
    await expect.poll(() => tabCount(page)).toBe(3);

    const background = () => page.evaluate(() => (window as unknown as TerminalWindow).execmuxConsole.tabs[0]!.terminal.options.theme.background);
    const fontSize = () => page.evaluate(() => (window as unknown as TerminalWindow).execmuxConsole.tabs[0]!.terminal.options.fontSize);
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe("dark");
    const darkBackground = await background();
    await page.click("#settings-button");
    await page.click('[data-theme-choice="light"]');
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe("light");
    expect(await background()).not.toBe(darkBackground);
    await page.click("#font-bigger");
    await page.click("#font-bigger");
    expect(await fontSize()).toBe(16);
    expect(await page.locator("#font-size").textContent()).toBe("16px");
    await screenshot(page, "settings-light");
    await page.keyboard.press("Escape");
    await page.keyboard.press("Control+Shift+Minus");
    expect(await fontSize()).toBe(15);
    // Kept for the next visit.
    await page.reload();
    await waitReady(page);
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe("light");
    await expect.poll(fontSize).toBe(15);
  });
});
