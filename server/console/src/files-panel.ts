/**
 * The Files panel: the folder the active terminal is in (a shell's `cd`
 * included), its files with their sizes, a download button on each, and
 * uploads by drag and drop (onto the panel or a terminal) or with a picker.
 */
import type { ConsoleApp, SidePanel } from "./console-app.js";
import { formatBytes, h } from "./dom.js";
import { downloadFile } from "./download.js";
import { icon } from "./icons.js";
import { parentOf, RemoteFiles, type RemoteEntry } from "./remote-files.js";
import type { TerminalTab } from "./terminal-tab.js";
import { uploadFiles } from "./drop-target.js";

export const FILES_CHANGED = "execmux:files-changed";

export class FilesPanel implements SidePanel {
  readonly element = h("section", { class: "panel files-panel", "aria-label": "Files" });
  private readonly files: RemoteFiles;
  private readonly pathField = h("input", { class: "field compact path-field", id: "files-path", spellcheck: "false", "aria-label": "Folder" });
  private readonly list = h("div", { class: "file-list", role: "list", id: "file-list" });
  private readonly message = h("div", { class: "panel-message", hidden: true });
  private current = "";
  private loading = 0;
  /** The path field holds something typed and not yet submitted. */
  private typing = false;
  private readonly onFilesChanged = (event: Event) => {
    if ((event as CustomEvent<string>).detail === this.current) void this.show(this.current);
  };

  constructor(private readonly app: ConsoleApp) {
    this.files = new RemoteFiles(app.client);
    const picker = h("input", { type: "file", multiple: true, hidden: true, id: "upload-picker" });
    picker.addEventListener("change", () => {
      if (picker.files?.length) void uploadFiles(app, [...picker.files], this.current);
      picker.value = "";
    });
    const button = (name: Parameters<typeof icon>[0], title: string, action: () => void, id?: string) => {
      const element = h("button", { class: "icon-button", type: "button", title, "aria-label": title, id }, icon(name));
      element.addEventListener("click", action);
      return element;
    };
    const pathForm = h("form", { class: "path-bar" }, button("up", "Parent folder", () => void this.show(parentOf(this.current))), this.pathField);
    this.pathField.addEventListener("input", () => (this.typing = true));
    // Left without pressing Enter: the field shows where the panel is again.
    this.pathField.addEventListener("blur", () => {
      this.typing = false;
      this.pathField.value = this.current;
    });
    pathForm.addEventListener("submit", (event) => {
      event.preventDefault();
      void this.show(this.pathField.value.trim() || "/");
    });
    this.element.append(
      h(
        "header",
        { class: "panel-header" },
        h("span", { class: "panel-title" }, icon("folder"), "Files"),
        h(
          "div",
          { class: "panel-actions" },
          button("terminal", "The terminal's folder", () => void this.follow(this.app.active)),
          button("refresh", "Refresh", () => void this.show(this.current)),
          button("upload", "Upload files…", () => picker.click(), "upload-button"),
          button("close", "Close", () => void this.app.togglePanel("files", false)),
        ),
      ),
      pathForm,
      this.message,
      this.list,
      h("footer", { class: "panel-footer" }, "Drop files here or on a terminal to upload them into this folder."),
      picker,
    );
    window.addEventListener(FILES_CHANGED, this.onFilesChanged);
  }

  private get editingPath(): boolean {
    return document.activeElement === this.pathField;
  }

  /** The folder shown: where uploads go. */
  get directory(): string {
    return this.current;
  }

  async follow(tab: TerminalTab | undefined): Promise<void> {
    const asked = this.loading;
    const cwd = tab?.options.interactive ? await this.files.workingDirectory(tab.source.processId) : undefined;
    const fallback = cwd ?? (this.current ? undefined : await this.files.home());
    // The person went somewhere else meanwhile, or is in the path field: that wins.
    if (fallback === undefined || this.loading !== asked || this.typing || this.editingPath) return;
    return this.show(fallback);
  }

  async show(directory: string): Promise<void> {
    const token = ++this.loading;
    this.current = directory;
    // Never under the person's caret: text typed there would be joined to it.
    if (!this.editingPath) this.pathField.value = directory;
    this.typing = false;
    this.element.classList.add("loading");
    try {
      const entries = await this.files.list(directory);
      if (token !== this.loading) return;
      this.renderEntries(entries);
      this.setMessage(entries.length === 0 ? "This folder is empty." : undefined);
    } catch (error) {
      if (token !== this.loading) return;
      this.list.replaceChildren();
      this.setMessage((error as Error).message, true);
    } finally {
      if (token === this.loading) this.element.classList.remove("loading");
    }
  }

  dispose(): void {
    window.removeEventListener(FILES_CHANGED, this.onFilesChanged);
    this.loading++;
  }

  private setMessage(text: string | undefined, error = false): void {
    this.message.hidden = text === undefined;
    this.message.textContent = text ?? "";
    this.message.classList.toggle("error", error);
  }

  private renderEntries(entries: RemoteEntry[]): void {
    this.list.replaceChildren(
      ...entries.map((entry) => {
        const row = h(
          "div",
          { class: `file-row${entry.isDirectory ? " directory" : ""}${entry.name.startsWith(".") ? " hidden-file" : ""}`, role: "listitem", tabindex: "0", "data-name": entry.name },
          icon(entry.isDirectory ? "folder" : "file"),
          h("span", { class: "file-name", title: entry.path }, entry.name),
          h("span", { class: "file-size" }, entry.isFile && entry.size !== undefined ? formatBytes(entry.size) : ""),
        );
        const open = () => (entry.isDirectory ? void this.show(entry.path) : entry.isFile ? void downloadFile(this.app.client, entry.path) : undefined);
        if (entry.isFile) {
          const download = h("button", { class: "icon-button row-action", type: "button", title: `Download ${entry.name}`, "aria-label": `Download ${entry.name}` }, icon("download"));
          download.addEventListener("click", (event) => {
            event.stopPropagation();
            open();
          });
          row.append(download);
          row.addEventListener("dblclick", open);
        } else if (entry.isDirectory) {
          row.addEventListener("click", open);
        }
        row.addEventListener("keydown", (event) => event.key === "Enter" && open());
        return row;
      }),
    );
  }
}
