/**
 * Files dropped on the terminals (or the Files panel) are uploaded into the
 * folder the Files panel shows, or else the active terminal's folder. The
 * upload code loads on the first drop.
 */
import type { ConsoleApp } from "./console-app.js";
import { h } from "./dom.js";
import { icon } from "./icons.js";

const carriesFiles = (event: DragEvent) => event.dataTransfer?.types.includes("Files") ?? false;

export function registerDropTarget(app: ConsoleApp): void {
  const area = document.getElementById("workspace")!;
  const overlay = h("div", { class: "drop-overlay", hidden: true }, h("div", { class: "drop-card" }, icon("upload"), h("span", {}, "Drop to upload")));
  area.append(overlay);
  let depth = 0;
  area.addEventListener("dragenter", (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    depth++;
    overlay.hidden = false;
  });
  area.addEventListener("dragover", (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    event.dataTransfer!.dropEffect = "copy";
  });
  area.addEventListener("dragleave", () => {
    if (--depth <= 0) {
      depth = 0;
      overlay.hidden = true;
    }
  });
  area.addEventListener("drop", (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    depth = 0;
    overlay.hidden = true;
    const files = [...(event.dataTransfer?.files ?? [])];
    if (files.length > 0) void uploadFiles(app, files);
  });
}

/** Uploads `files` one after another into `directory` (default: see above), then tells the Files panel. */
export async function uploadFiles(app: ConsoleApp, files: File[], directory?: string): Promise<string[]> {
  const target = directory ?? (await app.uploadDirectory());
  const { uploadFile } = await import("./upload.js");
  const paths: string[] = [];
  for (const file of files) {
    try {
      paths.push(await uploadFile(app.client, file, target));
    } catch {
      // Shown in its transfer card; the other files still go.
    }
  }
  window.dispatchEvent(new CustomEvent("execmux:files-changed", { detail: target }));
  return paths;
}
