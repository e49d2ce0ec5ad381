/**
 * Moving files in and out through the console, in real Chromium: a 50 MB
 * file dropped on a terminal lands in that shell's folder intact, and comes
 * back as a download intact, while the page never holds more than a few
 * blocks of it.
 */
import { createHash, randomBytes } from "node:crypto";
import { createReadStream, existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { startTestDaemon } from "./helpers/daemon.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { newTab, openConsole, screenshot, tabText, waitReady } from "./helpers/console-page.js";

const FILE_BYTES = 50 * 1000 * 1000;
/**
 * What the page may hold of a 50 MB transfer at once: the blocks in flight
 * (two of 1 MiB for fs/writeBlock, each also as base64 and in its JSON
 * message, about 6 MB a block) and slack; holding the file would be 50 MB.
 */
const PAGE_MEMORY_BOUND = 24 * 1024 * 1024;

async function sha256(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** A file of random bytes (so nothing can compress or fake it) in `directory`. */
function randomFile(directory: string, name: string, bytes: number): string {
  const path = join(directory, name);
  writeFileSync(path, randomBytes(bytes));
  return path;
}

/** JavaScript heap plus ArrayBuffer memory of the page after a full GC: what it really holds now. */
async function pageMemory(page: Page): Promise<number> {
  const session = await page.context().newCDPSession(page);
  await session.send("HeapProfiler.collectGarbage");
  const usage = (await session.send("Runtime.getHeapUsage")) as { usedSize: number; backingStorageSize?: number };
  await session.detach();
  if (usage.backingStorageSize === undefined) throw new Error("this Chromium does not report ArrayBuffer memory (Runtime.getHeapUsage backingStorageSize)");
  return usage.usedSize + usage.backingStorageSize;
}

/** Waits until the transfer card named `name` shows at least `percent` % done. */
async function transferPast(page: Page, name: string, percent: number): Promise<void> {
  await page.waitForFunction(
    ([wanted, least]) => Number(document.querySelector(`.transfer[data-name="${wanted}"] .progress`)?.getAttribute("aria-valuenow") ?? 0) >= least,
    [name, percent] as const,
  );
}

/** Drops a file from the disk on the terminals as a person would (the File stays on disk: only a handle is in the page). */
async function dropOnTerminal(page: Page, path: string): Promise<void> {
  await page.setInputFiles("#test-drop-source", path);
  await page.evaluate(() => {
    const file = (document.getElementById("test-drop-source") as HTMLInputElement).files![0]!;
    const transfer = new DataTransfer();
    transfer.items.add(file);
    const target = document.querySelector(".terminal-pane.active")!;
    for (const type of ["dragenter", "dragover", "drop"]) target.dispatchEvent(new DragEvent(type, { dataTransfer: transfer, bubbles: true, cancelable: true }));
  });
}

describe("files in the console", () => {
  it("uploads a 50 MB file dropped on a terminal into that shell's folder and downloads it back, intact, in bounded memory", async () => {
    const source = scratchDirectory("console-source");
    const target = scratchDirectory("console-target");
    const original = randomFile(source, "dataset.bin", FILE_BYTES);
    const expected = await sha256(original);
    const daemon = await startTestDaemon();
    const page = await openConsole(daemon.url);
    await waitReady(page);
    await page.evaluate(() => document.body.append(Object.assign(document.createElement("input"), { type: "file", id: "test-drop-source", hidden: true })));
    await newTab(page, "PS1='$ ' bash --norc --noprofile -i");
    await page.keyboard.type(`cd ${target} && echo moved-$((1+1))\n`);
    await expect.poll(() => tabText(page, 1)).toMatch(/^moved-2$/m);
    const baseline = await pageMemory(page);

    await dropOnTerminal(page, original);
    await transferPast(page, "dataset.bin", 40);
    const duringUpload = await pageMemory(page);
    await page.click("#toggle-files");
    // The file being written is already there, growing.
    await page.locator('.file-row[data-name="dataset.bin"]').waitFor();
    await screenshot(page, "upload-progress", { docs: true });
    await page.locator('.transfer.done[data-name="dataset.bin"]').waitFor({ timeout: 120_000 });
    expect(readdirSync(target)).toEqual(["dataset.bin"]);
    // fs/writeBlock where the daemon streams writes (upstream's fileWriteStreaming), else a pipe.
    const info = await page.evaluate(() =>
      (window as unknown as { execmuxConsole: { client: { request(method: string, params: null): Promise<{ capabilities: { fileWriteStreaming: boolean } }> } } }).execmuxConsole.client.request("environment/info", null),
    );
    expect(await page.locator('.transfer[data-name="dataset.bin"]').getAttribute("data-via")).toBe(info.capabilities.fileWriteStreaming ? "fs/writeBlock" : "pipe");
    expect(await sha256(join(target, "dataset.bin"))).toBe(expected);
    console.log("page memory during the upload, over its baseline:", duringUpload - baseline);
    expect(duringUpload - baseline).toBeLessThan(PAGE_MEMORY_BOUND);

    // The Files panel shows the shell's folder; its download button saves the file.
    await expect.poll(() => page.inputValue("#files-path")).toBe(target);
    const row = page.locator('.file-row[data-name="dataset.bin"]');
    await expect.poll(() => row.locator(".file-size").textContent()).toBe("50.0 MB");
    await screenshot(page, "files");
    const downloadStarts = page.waitForEvent("download");
    await row.hover();
    await row.locator(".row-action").click();
    const download = await downloadStarts;
    expect(download.suggestedFilename()).toBe("dataset.bin");
    await transferPast(page, "dataset.bin", 40);
    const duringDownload = await pageMemory(page);
    const saved = await download.path();
    expect(await sha256(saved)).toBe(expected);
    console.log("page memory during the download, over its baseline:", duringDownload - baseline);
    expect(duringDownload - baseline).toBeLessThan(PAGE_MEMORY_BOUND);
    // Streamed through the download worker, not gathered into a Blob.
    expect(await page.evaluate(() => navigator.serviceWorker.getRegistrations().then((all) => all.map((one) => one.active?.scriptURL)))).toEqual([
      expect.stringMatching(/\/console\/download-sw\.js$/),
    ]);
  });

  it("downloads through a Blob where no service worker may run, intact", async () => {
    const directory = scratchDirectory("console-blob");
    const original = randomFile(directory, "notes.bin", 3 * 1024 * 1024 + 17);
    const daemon = await startTestDaemon();
    const page = await openConsole(daemon.url, { serviceWorkers: "block" });
    await waitReady(page);
    await page.click("#toggle-files");
    await page.fill("#files-path", directory);
    await page.press("#files-path", "Enter");
    await expect.poll(() => page.inputValue("#files-path"), { message: "the panel shows the folder asked for" }).toBe(directory);
    const row = page.locator('.file-row[data-name="notes.bin"]');
    await row.waitFor();
    const downloadStarts = page.waitForEvent("download");
    await row.dblclick();
    const download = await downloadStarts;
    expect(await sha256(await download.path())).toBe(await sha256(original));
    expect(await page.evaluate(() => navigator.serviceWorker.getRegistrations().then((all) => all.length))).toBe(0);
  });

  it("never overwrites: a second upload of the same name gets a new one; a cancelled upload leaves nothing behind", async () => {
    const source = scratchDirectory("console-source");
    const target = scratchDirectory("console-target");
    writeFileSync(join(target, "report.txt"), "already here\n");
    const small = join(source, "report.txt");
    writeFileSync(small, "new report\n");
    const big = randomFile(source, "big.bin", FILE_BYTES);
    const daemon = await startTestDaemon();
    const page = await openConsole(daemon.url);
    await waitReady(page);
    await page.click("#toggle-files");
    await page.fill("#files-path", target);
    await page.press("#files-path", "Enter");
    await page.setInputFiles("#upload-picker", small);
    await page.locator('.transfer.done[data-name="report (1).txt"]').waitFor();
    expect(readdirSync(target).sort()).toEqual(["report (1).txt", "report.txt"]);
    await page.locator('.file-row[data-name="report (1).txt"]').waitFor();

    await page.setInputFiles("#upload-picker", big);
    await transferPast(page, "big.bin", 5);
    await page.locator('.transfer[data-name="big.bin"] button[aria-label="Cancel big.bin"]').click();
    await page.locator('.transfer.failed[data-name="big.bin"]').waitFor();
    expect(await page.locator('.transfer[data-name="big.bin"] .transfer-detail').textContent()).toContain("cancelled");
    expect(existsSync(join(target, "big.bin"))).toBe(false);
  });
});
