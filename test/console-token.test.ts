/**
 * How the console gets connected: the token form (a password field, the
 * daemon's refusal shown, a retry), the daemon out of reach and back, and
 * `GET /` pointing people at the console.
 */
import { get } from "node:http";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { startTestDaemon } from "./helpers/daemon.js";
import { FaultProxy } from "./helpers/fault-proxy.js";
import { httpOf, openConsole, screenshot, waitConnected } from "./helpers/console-page.js";

const TOKEN = "console-test-token-7f3a9c";

describe("the console's token form", () => {
  it("asks for the token in a password field, shows the daemon's refusal, and connects on retry", async () => {
    const daemon = await startTestDaemon({ token: TOKEN });
    const page = await openConsole(daemon.url);
    const field = page.locator("#gate input[name=token]");
    await field.waitFor();
    expect(await field.getAttribute("type")).toBe("password");
    await expect.poll(() => page.locator("#gate h1").textContent()).toBe("This daemon needs a token");
    await screenshot(page, "token-form", { docs: true });

    await field.fill("not-the-token");
    await page.click("#gate-connect");
    const error = page.locator("#token-error");
    await error.waitFor();
    expect(await error.textContent()).toContain("The daemon refused this token");
    expect(await page.locator("#token").getAttribute("aria-invalid")).toBe("true");
    await page.fill("#token", "also wrong");
    await screenshot(page, "token-refused", { docs: true });
    await page.click("#gate-connect");
    await page.locator("#token-error").waitFor();

    await page.fill("#token", TOKEN);
    await page.click("#gate-connect");
    await waitConnected(page);
    expect(await page.locator("#gate").isHidden()).toBe(true);
    // Kept for this browser tab only, never in localStorage.
    expect(await page.evaluate(() => JSON.stringify(localStorage))).not.toContain(TOKEN);
    expect(await page.evaluate(() => sessionStorage.getItem("execmux.console.token"))).toBe(TOKEN);
    // A reload does not ask again.
    await page.reload();
    await waitConnected(page);
    expect(await page.locator("#gate").isHidden()).toBe(true);
  });

  it("takes a token from the link's fragment and removes it from the address bar", async () => {
    const daemon = await startTestDaemon({ token: TOKEN });
    const page = await openConsole(daemon.url, { path: `/console/#token=${TOKEN}` });
    await waitConnected(page);
    expect(new URL(page.url()).hash).toBe("");
  });

  it("says when the daemon cannot be reached, and connects when retried once it can", async () => {
    const daemon = await startTestDaemon();
    const proxy = await FaultProxy.start(daemon.url);
    // The console's files arrive; then the daemon stops answering (its WebSocket and its health check).
    proxy.refuseClientText(/^GET \/(livez)? HTTP/m);
    const page = await openConsole(proxy.url);
    const retry = page.locator("#gate-retry");
    await retry.waitFor();
    expect(await page.locator("#gate h1").textContent()).toBe("Cannot reach the daemon");
    expect(await page.locator("#gate .gate-error").textContent()).toContain("No answer from the daemon");
    await screenshot(page, "unreachable", { docs: true });

    proxy.refuseClientText(undefined);
    await retry.click();
    await waitConnected(page);
  });
});

/** A GET with exactly these headers (fetch would add its own Accept-Encoding). */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    get(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(chunks) }));
    }).on("error", reject);
  });
}

describe("serving the console", () => {
  it("sends the build's gzip files to browsers that take gzip, the plain ones otherwise", async () => {
    const daemon = await startTestDaemon();
    const url = `${httpOf(daemon.url)}/console/console.js`;
    const plain = await rawGet(url, {});
    const compressed = await rawGet(url, { "accept-encoding": "gzip, deflate, br" });
    expect(plain.status).toBe(200);
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(compressed.headers["content-encoding"]).toBe("gzip");
    expect(compressed.headers["vary"]).toBe("accept-encoding");
    expect(compressed.body.length).toBeLessThan(plain.body.length / 2);
    expect(gunzipSync(compressed.body)).toEqual(plain.body);
    // The compressed files themselves are not addresses of their own.
    expect((await rawGet(`${url}.gz`, {})).status).toBe(404);
  });

});

describe("GET /", () => {
  it("links a browser to the console, and tells a program where it is, without a token", async () => {
    const daemon = await startTestDaemon({ token: TOKEN });
    const html = await fetch(`${httpOf(daemon.url)}/`, { headers: { accept: "text/html,application/xhtml+xml" } });
    expect(html.status).toBe(200);
    expect(html.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await html.text()).toContain('<a href="console/">Open the web console</a>');
    const plain = await fetch(`${httpOf(daemon.url)}/`);
    expect(await plain.text()).toMatch(/web console is at console\//);
    // /console redirects relatively, so it also works under a router's path prefix.
    const redirect = await fetch(`${httpOf(daemon.url)}/console`, { redirect: "manual" });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get("location")).toBe("console/");
  });
});
