/** The SDK in a real browser, and the web console the daemon serves. */
import { describe, expect, it } from "vitest";
import { startTestDaemon } from "./helpers/daemon.js";
import { FaultProxy } from "./helpers/fault-proxy.js";
import { launchBrowser } from "./helpers/browser.js";
import { httpOf, newTab, openConsole, screenshot, tabCount, tabText, typeInto, waitConnected } from "./helpers/console-page.js";

describe("in a real browser", () => {
  it("runs a command with the SDK in the page and decodes UTF-8 split across chunks", async () => {
    const daemon = await startTestDaemon();
    const page = await (await launchBrowser()).newPage();
    await page.goto(`${httpOf(daemon.url)}/console/`);
    // As a string: the test runner would rewrite a dynamic import() in a function.
    const result = (await page.evaluate(`(async () => {
      const sdk = await import("/console/execmux-client.js");
      const client = await sdk.connect(${JSON.stringify(daemon.url)});
      const echo = await client.start({ argv: ["echo", "hello from the browser"] });
      let echoed = "";
      echo.onText((text) => (echoed += text));
      const code = await echo.wait();
      // One byte at a time, with pauses, so every multi-byte character is split across chunks.
      const bytes = [...new TextEncoder().encode("héllo ✓ 日本 🎉")].map((byte) => "\\\\" + byte.toString(8).padStart(3, "0"));
      const slow = await client.start({ argv: ["sh", "-c", 'for b in "$@"; do printf "$b"; sleep 0.02; done', "sh", ...bytes] });
      let chunks = 0;
      let slowText = "";
      slow.onOutput(() => chunks++);
      slow.onText((text) => (slowText += text));
      await slow.wait();
      client.close();
      return { echoed, code, slowText, chunks };
    })()`)) as { echoed: string; code: number; slowText: string; chunks: number };
    expect(result.echoed).toBe("hello from the browser\n");
    expect(result.code).toBe(0);
    expect(result.slowText).toBe("héllo ✓ 日本 🎉");
    expect(result.chunks).toBeGreaterThan(10);
  });

  it("opens two terminals on one socket, recovers from a cut, reattaches after a reload", async () => {
    const daemon = await startTestDaemon();
    const proxy = await FaultProxy.start(daemon.url);
    const page = await openConsole(proxy.url);
    await waitConnected(page);
    // The first tab (a login shell) opens by itself; close it and open two plain shells.
    await expect.poll(() => tabCount(page)).toBe(1);
    await page.locator(".tab .tab-close").first().click();
    await expect.poll(() => tabCount(page)).toBe(0);
    for (const _ of [1, 2]) await newTab(page, "bash --norc -i");
    await expect.poll(() => tabCount(page)).toBe(2);

    await typeInto(page, 0, "echo first-$((40+2))");
    await typeInto(page, 1, "echo second-$((50+5))");
    await expect.poll(() => tabText(page, 0), { timeout: 20_000 }).toMatch(/^first-42$/m);
    await expect.poll(() => tabText(page, 1), { timeout: 20_000 }).toMatch(/^second-55$/m);
    expect(await tabText(page, 0)).not.toContain("second-55");
    expect(await tabText(page, 1)).not.toContain("first-42");
    await screenshot(page, "two-tabs");

    // The network drops under a running command; every line still arrives, once.
    await typeInto(page, 1, "for i in $(seq 1 300); do echo line-$i; done; echo done-$((1+1))");
    proxy.cutAll();
    await expect.poll(() => tabText(page, 1), { timeout: 20_000 }).toMatch(/^done-2$/m);
    await page.locator("#status.connected").waitFor();
    const lines = (await tabText(page, 1)).split("\n").filter((line) => /^line-\d+$/.test(line));
    expect(lines).toEqual(Array.from({ length: 300 }, (_, index) => `line-${index + 1}`));

    // A reload reattaches to the same session and replays each terminal.
    await page.reload();
    await page.locator("#status.connected").waitFor();
    await expect.poll(() => tabCount(page), { timeout: 20_000 }).toBe(2);
    await expect.poll(() => tabText(page, 0), { timeout: 20_000 }).toMatch(/^first-42$/m);
    await typeInto(page, 0, "exit 3");
    await expect.poll(() => tabText(page, 0), { timeout: 20_000 }).toContain("[process exited with code 3]");
  });
});
