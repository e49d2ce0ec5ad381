/** The tray of file transfers (uploads, downloads, recordings): one card each, with a progress bar. */
import { formatBytes, h } from "./dom.js";
import { icon } from "./icons.js";

export type Direction = "upload" | "download";

/** How long a finished transfer stays in the tray. */
const DONE_LINGER_MS = 6_000;

export class TransferItem {
  readonly element: HTMLElement;
  readonly abort = new AbortController();
  private readonly bar = h("div", { class: "progress-bar" });
  private readonly detail = h("span", { class: "transfer-detail" });
  private readonly cancel: HTMLButtonElement;
  private bytes = 0;

  constructor(
    readonly direction: Direction,
    readonly name: string,
    private total: number | undefined,
    where: string,
  ) {
    this.cancel = h("button", { class: "icon-button", type: "button", title: "Cancel", "aria-label": `Cancel ${name}` }, icon("close"));
    this.cancel.addEventListener("click", () => this.abort.abort(new Error("cancelled")));
    this.element = h(
      "div",
      { class: `transfer ${direction}`, role: "status", "data-name": name },
      h("div", { class: "transfer-icon" }, icon(direction)),
      h(
        "div",
        { class: "transfer-body" },
        h("div", { class: "transfer-title" }, h("span", { class: "transfer-name", title: name }, name), this.cancel),
        h("div", { class: "transfer-where", title: where }, where),
        h("div", { class: "progress", role: "progressbar", "aria-valuemin": "0", "aria-valuemax": "100" }, this.bar),
        this.detail,
      ),
    );
    this.render();
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  progress(bytes: number, total = this.total): void {
    this.bytes = bytes;
    this.total = total;
    this.render();
  }

  done(note?: string): void {
    this.element.classList.add("done");
    this.cancel.remove();
    this.bar.style.width = "100%";
    this.detail.replaceChildren(icon("check"), ` ${note ?? formatBytes(this.bytes)}`);
    setTimeout(() => this.element.remove(), DONE_LINGER_MS);
  }

  fail(message: string): void {
    this.element.classList.add("failed");
    this.cancel.title = "Dismiss";
    this.cancel.onclick = () => this.element.remove();
    this.detail.replaceChildren(icon("alert"), ` ${message}`);
  }

  private render(): void {
    const { bytes, total } = this;
    const fraction = total ? Math.min(1, bytes / total) : 0;
    this.bar.style.width = `${(fraction * 100).toFixed(1)}%`;
    this.element.querySelector(".progress")?.setAttribute("aria-valuenow", String(Math.round(fraction * 100)));
    this.detail.textContent = total !== undefined ? `${formatBytes(bytes)} of ${formatBytes(total)}` : formatBytes(bytes);
  }
}

export class Transfers {
  constructor(private readonly root: HTMLElement) {}

  add(direction: Direction, name: string, total: number | undefined, where: string): TransferItem {
    const item = new TransferItem(direction, name, total, where);
    this.root.append(item.element);
    return item;
  }
}

let shared: Transfers | undefined;
/** The page's one tray (#transfers). */
export const transfers = () => (shared ??= new Transfers(document.getElementById("transfers")!));
