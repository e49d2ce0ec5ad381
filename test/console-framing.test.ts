/**
 * The console refuses to be framed (Content-Security-Policy frame-ancestors
 * 'none' and X-Frame-Options: DENY), and its own scripts, styles and
 * WebSocket still work under its policy, in real Chromium.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startTestDaemon } from "./helpers/daemon.js";
import { launchBrowser } from "./helpers/browser.js";
import { httpUrl } from "./helpers/http.js";

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A page on another origin (another port) that frames `target`. */
async function framingPage(target: string): Promise<string> {
  const server = createServer((_request, response) => {
    response.setHeader("content-type", "text/html; charset=utf-8");
    response.end(`<!doctype html><iframe id="victim" src="${target}" width="800" height="400"></iframe>`);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

describe("the console's security headers", () => {
  it("sends frame-ancestors 'none' and X-Frame-Options: DENY on every console answer", async () => {
    const daemon = await startTestDaemon();
    for (const path of ["/console", "/console/", "/console/console.js", "/console/xterm.css"]) {
      const response = await fetch(`${httpUrl(daemon.url)}${path}`, { redirect: "manual" });
      expect(response.headers.get("content-security-policy"), path).toContain("frame-ancestors 'none'");
      expect(response.headers.get("content-security-policy"), path).toContain("script-src 'self'");
      expect(response.headers.get("x-frame-options"), path).toBe("DENY");
    }
  });

  it("loads and connects under its own policy, and cannot be framed by another page", async () => {
    const daemon = await startTestDaemon();
    const console = `${httpUrl(daemon.url)}/console/`;
    const browser = await launchBrowser();

    const page = await browser.newPage();
    // Every violation of the policy the page meets, reported by the browser itself.
    await page.addInitScript(() => {
      const seen: string[] = [];
      (window as unknown as { cspViolations: string[] }).cspViolations = seen;
      document.addEventListener("securitypolicyviolation", (event) => seen.push(`${event.violatedDirective} ${event.blockedURI}`));
    });
    await page.goto(console);
    // Connected: its script ran and its WebSocket reached the daemon.
    await page.locator("#status.connected").waitFor();
    await page.locator(".xterm").first().waitFor();
    // Its inline style block and xterm's stylesheet applied.
    expect(await page.evaluate(() => getComputedStyle(document.querySelector("header")!).display)).toBe("flex");
    expect(await page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue("--accent").trim())).toMatch(/^#[0-9a-f]{6}$/);
    expect(await page.evaluate(() => getComputedStyle(document.querySelector(".xterm-helper-textarea")!).position)).toBe("absolute");
    expect(await page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations)).toEqual([]);

    const attacker = await browser.newPage();
    await attacker.goto(await framingPage(console));
    await attacker.locator("#victim").waitFor();
    const frame = await (await attacker.locator("#victim").elementHandle())!.contentFrame();
    // Blocked: the frame holds Chromium's error page, never the console.
    await expect.poll(() => frame!.url()).not.toBe("about:blank");
    expect(frame!.url()).not.toContain("/console/");
    expect(await frame!.locator("#status").count()).toBe(0);
  });
});
