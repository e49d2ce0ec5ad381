/**
 * The console as a person meets it, in real Chromium: a shell in a project,
 * a build in a second tab that names itself, the Files panel beside them,
 * and the light theme with a search. Its screenshots are the ones
 * docs/console.md shows, the first also the README's (EXECMUX_SCREENSHOTS=docs writes them).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startTestDaemon } from "./helpers/daemon.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { newTab, openConsole, screenshot, tabText, tabTitles, waitReady } from "./helpers/console-page.js";

/** A small project to look at. */
function makeProject(): string {
  const project = join(scratchDirectory("console-tour"), "webshop");
  mkdirSync(join(project, "src"), { recursive: true });
  mkdirSync(join(project, "test"));
  writeFileSync(join(project, "README.md"), "# webshop\n\nA small shop.\n".repeat(20));
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "webshop", version: "1.4.0", scripts: { test: "node --test" } }, null, 2));
  writeFileSync(join(project, "src", "server.ts"), "export const port = 8080;\n".repeat(120));
  writeFileSync(join(project, "orders.csv"), "id,item,qty\n".repeat(9000));
  writeFileSync(join(project, ".gitignore"), "node_modules/\ndist/\n");
  return project;
}

const BUILD = String.raw`printf '\033]0;build\007'; for step in lint compile "unit tests" "integration tests"; do printf '\033[1;34m==>\033[0m %s\n' "$step"; sleep 0.1; done; printf '\033[32m✓\033[0m 128 tests passed in 2.4s\n\033[2mbundle: dist/server.js 182 KB\033[0m\n'; sleep 600`;

describe("a tour of the console", () => {
  it("shows a shell, a build titled by itself, the Files panel, the light theme and search", async () => {
    const project = makeProject();
    const daemon = await startTestDaemon();
    const page = await openConsole(daemon.url, { viewport: { width: 1280, height: 720 } });
    await waitReady(page);
    await page.keyboard.type(`cd ${project} && clear && ls -l --color=always\n`);
    await expect.poll(() => tabText(page, 0)).toMatch(/orders\.csv/);
    await newTab(page, BUILD);
    await expect.poll(() => tabText(page, 1)).toContain("128 tests passed");
    await expect.poll(() => tabTitles(page)).toEqual(["bash", "build"]);
    await page.locator(".tab").first().click();
    await page.click("#toggle-files");
    await expect.poll(() => page.inputValue("#files-path")).toBe(project);
    await expect.poll(() => page.locator('.file-row[data-name="orders.csv"] .file-size').textContent()).toBe("108.0 KB");
    await screenshot(page, "console", { docs: true, alsoAs: "docs/console.png" });

    await page.click("#toggle-files");
    await page.locator(".tab").nth(1).click();
    await page.click("#settings-button");
    await page.click('[data-theme-choice="light"]');
    await page.keyboard.press("Escape");
    await page.keyboard.press("Control+Shift+F");
    await page.fill(".search-bar input", "tests");
    await expect.poll(() => page.locator(".search-count").textContent()).toMatch(/of 3$/);
    await screenshot(page, "light-search", { docs: true });
  });
});
