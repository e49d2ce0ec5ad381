/**
 * Recordings: a tab's retained output saved as an asciicast v2 file whose
 * output, replayed by asciinema itself, is the process's bytes, with the
 * times the daemon read them.
 */
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { connect } from "@execmux/client";
import { startTestDaemon } from "./helpers/daemon.js";
import { openConsole, screenshot, tabText, waitReady } from "./helpers/console-page.js";

type CastEvent = [number, string, string];

/** Debian's asciinema (scripts/ensure-debian-packages.mjs installs it). */
const ASCIINEMA = "/usr/bin/asciinema";

/** A PTY program whose output has colours, characters split across chunks, and a pause only the test can end. */
const PROGRAM = String.raw`printf '\033[1;32mready\033[0m caf'; sleep 0.2; printf '\303'; sleep 0.2; printf '\251 \342\234'; sleep 0.2; printf '\223 \344\270\255\n'; read answer; printf 'got %s\n' "$answer"; for i in 1 2 3; do printf 'line %s\r\n' $i; done; read finish`;

describe("recordings", () => {
  it("downloads a tab's output as an asciicast that asciinema replays byte for byte, with the daemon's timings", async () => {
    if (!existsSync(ASCIINEMA)) throw new Error(`${ASCIINEMA} is missing: node scripts/ensure-debian-packages.mjs installs it (apt-get install asciinema)`);
    const daemon = await startTestDaemon();
    const page = await openConsole(daemon.url);
    await waitReady(page);
    await page.fill("#command", PROGRAM);
    await page.press("#command", "Enter");
    await expect.poll(() => tabText(page, 1)).toContain("ready café ✓ 中");
    const sawReady = Date.now();
    await screenshot(page, "recording-tab");
    const answeredAfter = Date.now();
    await page.keyboard.type("yes\n");
    await expect.poll(() => tabText(page, 1)).toMatch(/^line 3$/m);

    const downloadStarts = page.waitForEvent("download");
    await page.click("#record");
    const download = await downloadStarts;
    expect(download.suggestedFilename()).toMatch(/\.cast$/);
    const castPath = await download.path();
    const [headerLine, ...eventLines] = readFileSync(castPath, "utf8").trimEnd().split("\n");
    const header = JSON.parse(headerLine!) as { version: number; width: number; height: number; timestamp: number; title: string };
    const events = eventLines.map((line) => JSON.parse(line) as CastEvent);

    // What the daemon retained for that process, read by a client of its session.
    const sessionId = await page.evaluate(() => (window as unknown as { execmuxConsole: { client: { sessionId: string } } }).execmuxConsole.client.sessionId);
    const processId = await page.locator(".tab").nth(1).getAttribute("data-process-id");
    const reader = await connect(daemon.url, { resume: { sessionId, processes: [processId!] } });
    const retained = await reader.read(processId!);
    const bytes = Buffer.concat(retained.chunks.map((chunk) => Buffer.from(chunk.chunk, "base64")));
    // asciinema's own replayer prints the cast's output; it wants a terminal, so it gets one (raw: bytes pass unchanged).
    const replay = await reader.start({ argv: [ASCIINEMA, "cat", castPath], tty: true, env: { LANG: "C.UTF-8" } });
    const replayed: Buffer[] = [];
    replay.onOutput(({ data }) => replayed.push(Buffer.from(data)));
    expect(await replay.wait()).toBe(0);
    reader.close();

    expect(header).toMatchObject({ version: 2, title: PROGRAM });
    expect(header.width).toBeGreaterThan(20);
    expect(Math.abs(header.timestamp * 1000 - sawReady)).toBeLessThan(60_000);
    expect(events.every(([, kind]) => kind === "o")).toBe(true);
    expect(Buffer.from(events.map(([, , text]) => text).join(""), "utf8")).toEqual(bytes);
    expect(Buffer.concat(replayed)).toEqual(bytes);
    // Times in order; the answer came only after the test had seen "ready", so its echo is at least that much later.
    const times = events.map(([time]) => time);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    const readyAt = events.find(([, , text]) => text.includes("ready"))![0];
    const answerAt = events.find(([, , text]) => text.includes("got yes"))![0];
    expect(answerAt - readyAt).toBeGreaterThanOrEqual((answeredAfter - sawReady) / 1000 - 0.002);
    // The multi-byte characters, split across chunks by the program, are whole in the events.
    expect(events.map(([, , text]) => text).join("")).toContain("café ✓ 中");
  });
});
