/**
 * Watching an agent in the console, in real Chromium: the Sessions panel
 * lists the session another client (the "agent") drives, a watched tab shows
 * its history and then its live output, typing there reaches nothing, the
 * agent's session is untouched, and only a confirmed take-over makes the
 * console its holder.
 */
import { describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { connect, type ProcessHandle } from "@execmux/client";
import { startTestDaemon } from "./helpers/daemon.js";
import { openConsole, screenshot, tabCount, tabText, tabTitles, waitReady } from "./helpers/console-page.js";

/** Everything a handle printed so far, as text. */
function collect(handle: ProcessHandle): () => string {
  let text = "";
  handle.onText((chunk) => (text += chunk));
  return () => text;
}

interface WatchWindow {
  execmuxConsole: { app: { tabs: { source: { processId: string }; options: { interactive: boolean; sessionId?: string } }[]; watched: Map<string, unknown> } };
}

const tabIndexOf = (page: Page, processId: string) =>
  page.evaluate((id) => (window as unknown as WatchWindow).execmuxConsole.app.tabs.findIndex((tab) => tab.source.processId === id), processId);

describe("watching another client's session", () => {
  it("lists the agent's session, follows it read-only with its history, and takes it over only when asked", async () => {
    const daemon = await startTestDaemon();
    // The agent: its own connection and session, a shell on a PTY and a build on pipes.
    const agent = await connect(daemon.url, { clientName: "agent: fix the login bug" });
    const agentEvents: string[] = [];
    agent.on("disconnected", (reason) => agentEvents.push(`disconnected ${reason}`));
    agent.on("sessionLost", (error) => agentEvents.push(`lost ${error.message}`));
    const shell = await agent.start({ argv: ["bash", "--norc", "--noprofile", "-i"], env: { PS1: "$ " }, tty: true, cols: 100, rows: 30 });
    const shellText = collect(shell);
    await shell.write("echo history-$((1+1))\n");
    await expect.poll(shellText).toMatch(/^history-2\r?$/m);
    const build = await agent.start({ argv: ["sh", "-c", "echo compiling; read go; echo linked-$go"], pipeStdin: true });
    const buildText = collect(build);
    await expect.poll(buildText).toContain("compiling");

    const page = await openConsole(daemon.url, { viewport: { width: 1280, height: 720 } });
    await waitReady(page);
    await page.click("#toggle-sessions");
    const agentCard = page.locator(`.session[data-session-id="${agent.sessionId}"]`);
    await agentCard.waitFor();
    expect(await agentCard.locator(".session-name").textContent()).toBe("agent: fix the login bug");
    expect(await agentCard.locator(".process-command").allTextContents()).toEqual(["bash --norc --noprofile -i", 'sh -c echo compiling; read go; echo linked-$go']);
    expect(await agentCard.locator(".session-badge").first().textContent()).toBe("attached");
    await screenshot(page, "sessions", { docs: true });

    // Watch the whole session: a read-only tab for each process, history first.
    await agentCard.locator('[data-action="watch-session"]').click();
    await expect.poll(() => tabCount(page)).toBe(3);
    const shellTab = await tabIndexOf(page, shell.processId);
    const buildTab = await tabIndexOf(page, build.processId);
    await expect.poll(() => tabText(page, shellTab)).toMatch(/^history-2$/m);
    await expect.poll(() => tabText(page, buildTab)).toContain("compiling");
    expect(await tabTitles(page)).toEqual(["bash", "bash --norc --noprofile -i", 'sh -c echo compiling; read go; echo linked-$go']);

    // Then live: what the agent does appears as it happens.
    await shell.write("echo live-$((2+3))\n");
    await expect.poll(() => tabText(page, shellTab)).toMatch(/^live-5$/m);
    await build.write("7\n");
    await expect.poll(() => tabText(page, buildTab)).toContain("linked-7");
    // A process the agent starts later gets its tab too.
    const later = await agent.start({ argv: ["sh", "-c", "echo started-later; sleep 600"] });
    await expect.poll(() => tabCount(page)).toBe(4);
    await expect.poll(() => tabText(page, 3)).toContain("started-later");

    // Typing in a watched tab reaches nothing: the terminal takes no keys, and the daemon refuses the observer's writes.
    await page.locator(".tab").nth(shellTab).click();
    await page.locator(".terminal-pane.active .xterm-helper-textarea").focus();
    await page.keyboard.type("echo typed-by-watcher\n");
    const refused = await page.evaluate(async (id) => {
      const app = (window as unknown as { execmuxConsole: { app: { watched: Map<string, { watcher: { request(method: string, params: unknown): Promise<unknown> } }> } } }).execmuxConsole.app;
      const watched = [...app.watched.values()][0]!;
      return watched.watcher.request("process/write", { processId: id, chunk: btoa("echo injected\n"), writeId: "w1" }).then(
        () => "accepted",
        (error: { code: number }) => error.code,
      );
    }, shell.processId);
    expect(refused).toBe(-32013);
    await shell.write("echo agent-still-here\n");
    await expect.poll(shellText).toMatch(/^agent-still-here\r?$/m);
    expect(shellText()).not.toContain("typed-by-watcher");
    expect(shellText()).not.toContain("injected");
    await expect.poll(() => tabText(page, shellTab)).toMatch(/^agent-still-here$/m);
    await screenshot(page, "watching", { docs: true });
    // The agent noticed nothing: same connection, its session attached to it.
    expect(agentEvents).toEqual([]);
    const [listed] = await agent.listSessions({ sessionId: agent.sessionId });
    expect(listed).toMatchObject({ attached: true, current: true, observers: 1 });

    // Take over only on an explicit, confirmed action; cancelling changes nothing.
    await page.locator('.terminal-pane.active [data-action="take-over"]').click();
    await page.locator("#dialog-cancel").click();
    expect(agentEvents).toEqual([]);
    await page.locator('.terminal-pane.active [data-action="take-over"]').click();
    await page.locator(".dialog-card").waitFor();
    await screenshot(page, "take-over", { docs: true });
    await page.locator("#dialog-confirm").click();
    await expect.poll(() => agentEvents).toEqual([expect.stringMatching(/^disconnected/), expect.stringMatching(/^lost .*taken over/)]);
    // The watched tabs are now the console's: typing reaches the agent's shell, same process.
    await expect.poll(() => page.evaluate(() => (window as unknown as WatchWindow).execmuxConsole.app.tabs.filter((tab) => tab.options.sessionId && tab.options.interactive).length)).toBe(3);
    const takenShell = await tabIndexOf(page, shell.processId);
    await page.locator(".tab").nth(takenShell).click();
    await page.locator(".terminal-pane.active .xterm-helper-textarea").focus();
    await page.keyboard.type("echo taken-$((3+4))\n");
    await expect.poll(() => tabText(page, takenShell)).toMatch(/^taken-7$/m);
    expect(await tabText(page, takenShell)).toMatch(/^history-2$/m);
    void later;
  });

  it("records a watched process from the daemon's retained output", async () => {
    const daemon = await startTestDaemon();
    const agent = await connect(daemon.url, { clientName: "agent" });
    const job = await agent.start({ argv: ["sh", "-c", "printf 'step one\\n'; read go; printf 'step two\\n'; sleep 600"], pipeStdin: true });
    const jobText = collect(job);
    await expect.poll(jobText).toContain("step one");
    const page = await openConsole(daemon.url);
    await waitReady(page);
    await page.click("#toggle-sessions");
    await page.locator(`.process-row[data-process-id="${job.processId}"] [data-action="watch-process"]`).click();
    await expect.poll(() => tabCount(page)).toBe(2);
    await job.write("\n");
    await expect.poll(() => tabText(page, 1)).toContain("step two");
    const downloadStarts = page.waitForEvent("download");
    await page.click("#record");
    const download = await downloadStarts;
    const { readFileSync } = await import("node:fs");
    const events = readFileSync(await download.path(), "utf8").trimEnd().split("\n").slice(1).map((line) => JSON.parse(line) as [number, string, string]);
    expect(events.map(([, , text]) => text).join("")).toBe("step one\nstep two\n");
    expect(events[1]![0]).toBeGreaterThanOrEqual(events[0]![0]);
    agent.close();
  });
});
