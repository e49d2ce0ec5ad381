/**
 * One tab: an xterm.js terminal showing one process. For a process of this
 * console's session it is interactive (keys go to the process, resizes too);
 * for a process the console only watches it is read-only.
 */
import type { ResultOf } from "@execmux/client";
import { Terminal } from "@xterm/xterm";
import { FitAddon } from "@xterm/addon-fit";
import { SearchAddon } from "@xterm/addon-search";
import { Unicode11Addon } from "@xterm/addon-unicode11";
import { WebLinksAddon } from "@xterm/addon-web-links";
import { h } from "./dom.js";
import { icon } from "./icons.js";
import { isAppShortcut } from "./shortcuts.js";
import { TERMINAL_FONT, TERMINAL_THEMES } from "./themes.js";

/** What a tab needs of a process: a ProcessHandle of the SDK, or a watched process. */
export interface TabSource {
  readonly processId: string;
  onOutput(listener: (event: { readonly data: Uint8Array }) => void): () => void;
  onGap(listener: (gap: { readonly bytes: number; readonly bytesExact: boolean }) => void): () => void;
  onExit(listener: (exitCode: number) => void): () => void;
  /** Credit back for output the terminal has rendered (flow control). */
  ack(bytes: number): void;
  write?(data: string): Promise<unknown>;
  resize?(cols: number, rows: number): Promise<unknown>;
  /** The retained output with times, for a recording (a watched process; the console's own use process/read). */
  readRetained?(afterSeq: number, maxBytes: number): Promise<ResultOf<"process/read">>;
}

export interface TabOptions {
  /** Shown until the process sets a title of its own (OSC 0/2). */
  command: string;
  /** False: output only, no keys (a watched process). */
  interactive: boolean;
  fontSize: number;
  theme: "dark" | "light";
  /** The terminal size to start with, before the first fit. */
  cols?: number;
  rows?: number;
  /** Set for a process of another session (watched, or taken over); absent for this console's own. */
  sessionId?: string;
}

export interface TabEvents {
  select(tab: TerminalTab): void;
  close(tab: TerminalTab): void;
  titleChanged(tab: TerminalTab): void;
}

export class TerminalTab {
  readonly terminal: Terminal;
  readonly search = new SearchAddon({ highlightLimit: 1000 });
  readonly pane = h("div", { class: "terminal-pane" });
  /** The terminal's own box inside the pane, below any banner: what fit measures. */
  private readonly host = h("div", { class: "terminal-host" });
  readonly button = h("div", { class: "tab", role: "tab", tabindex: "-1" });
  private readonly label = h("span", { class: "tab-label" });
  private readonly fit = new FitAddon();
  private processTitle = "";
  private exitCode: number | null = null;
  private readonly offs: (() => void)[] = [];

  constructor(
    readonly source: TabSource,
    readonly options: TabOptions,
    private readonly events: TabEvents,
  ) {
    this.terminal = new Terminal({
      allowProposedApi: true, // the Unicode 11 width tables are a "proposed" API
      cursorBlink: options.interactive,
      disableStdin: !options.interactive,
      scrollback: 10_000,
      fontSize: options.fontSize,
      fontFamily: TERMINAL_FONT,
      theme: TERMINAL_THEMES[options.theme],
      macOptionIsMeta: true,
      ...(options.cols && options.rows ? { cols: options.cols, rows: options.rows } : {}),
    });
    this.pane.dataset.processId = source.processId;
    this.pane.append(this.host);
    this.button.dataset.processId = source.processId;
    this.button.setAttribute("aria-selected", "false");
    this.button.title = `${options.command}\nprocess ${source.processId}`;
    const close = h("button", { class: "tab-close", type: "button", title: options.interactive ? "Close (ends the process)" : "Stop watching", "aria-label": "Close tab" }, icon("close"));
    close.addEventListener("click", (event) => {
      event.stopPropagation();
      this.events.close(this);
    });
    this.button.append(...(options.interactive ? [] : [icon("eye", "watching")]), this.label, close);
    this.button.addEventListener("click", () => this.events.select(this));
    this.button.addEventListener("auxclick", (event) => event.button === 1 && this.events.close(this));
    if (!options.interactive) this.button.classList.add("watching");
    this.renderLabel();

    for (const addon of [this.fit, this.search, new Unicode11Addon(), new WebLinksAddon((_event, uri) => window.open(uri, "_blank", "noopener,noreferrer"))]) {
      this.terminal.loadAddon(addon);
    }
    this.terminal.unicode.activeVersion = "11";
    this.terminal.onTitleChange((title) => {
      this.processTitle = title.trim();
      this.renderLabel();
      this.events.titleChanged(this);
    });
    this.terminal.attachCustomKeyEventHandler((event) => this.onKey(event));

    // xterm decodes UTF-8 itself, statefully, so a character split across chunks is fine.
    // Credit goes back only once xterm has processed the bytes: a flood is
    // paced by rendering, and Ctrl-C is not stuck behind megabytes in the page.
    this.offs.push(
      source.onOutput((event) => this.terminal.write(event.data, () => source.ack(event.data.length))),
      source.onGap((gap) =>
        this.terminal.write(`\r\n\x1b[30;43m[execmux: ${gap.bytes}${gap.bytesExact ? "" : "+"} bytes of output are missing here: the daemon no longer had them]\x1b[0m\r\n`),
      ),
      source.onExit((code) => {
        this.exitCode = code;
        this.terminal.write(`\r\n\x1b[2m[process exited with code ${code}]\x1b[0m\r\n`);
        this.button.classList.add("exited");
        this.renderLabel();
      }),
    );
    if (options.interactive && source.write && source.resize) {
      const { write, resize } = source as Required<Pick<TabSource, "write" | "resize">>;
      this.terminal.onData((data) => void write.call(source, data).catch(() => undefined));
      this.terminal.onBinary((data) => void write.call(source, data).catch(() => undefined));
      this.terminal.onResize(({ cols, rows }) => void resize.call(source, cols, rows).catch(() => undefined));
    }
  }

  /** The process's own title (OSC 0/2), else its command. */
  get title(): string {
    return this.processTitle || this.options.command;
  }

  get exited(): boolean {
    return this.exitCode !== null;
  }

  /** Opens the terminal in its pane (the pane must be in the document). */
  open(): void {
    this.terminal.open(this.host);
    this.fitToPane();
  }

  fitToPane(): void {
    if (this.pane.classList.contains("active")) this.fit.fit();
  }

  setActive(active: boolean): void {
    this.pane.classList.toggle("active", active);
    this.button.classList.toggle("active", active);
    this.button.setAttribute("aria-selected", String(active));
    if (active) {
      this.fitToPane();
      this.terminal.focus();
    }
  }

  setAppearance(fontSize: number, theme: "dark" | "light"): void {
    this.terminal.options.fontSize = fontSize;
    this.terminal.options.theme = TERMINAL_THEMES[theme];
    this.fitToPane();
  }

  /** Shows a bar above the terminal (a watched process's notice), or removes it. */
  setBanner(banner: HTMLElement | undefined): void {
    this.pane.querySelector(":scope > .pane-banner")?.remove();
    if (banner) {
      banner.classList.add("pane-banner");
      this.pane.prepend(banner);
    }
    this.pane.classList.toggle("has-banner", banner !== undefined);
    this.fitToPane();
  }

  /** The terminal's text, for tests and screenshots. */
  text(): string {
    const buffer = this.terminal.buffer.active;
    const lines: string[] = [];
    for (let index = 0; index < buffer.length; index++) lines.push(buffer.getLine(index)?.translateToString(true) ?? "");
    return lines.join("\n").trimEnd();
  }

  dispose(): void {
    for (const off of this.offs.splice(0)) off();
    this.terminal.dispose();
    this.pane.remove();
    this.button.remove();
  }

  private renderLabel(): void {
    this.label.textContent = this.title;
  }

  /**
   * Keys the terminal must not swallow. Copy and paste go through the
   * browser's own copy and paste events, which xterm answers with the
   * selection and by pasting (bracketed when the program asked for it): that
   * works without the Clipboard API, so also over plain http.
   */
  private onKey(event: KeyboardEvent): boolean {
    if (event.type !== "keydown") return true;
    if (isAppShortcut(event)) return false;
    const ctrlOnly = event.ctrlKey && !event.altKey && !event.metaKey;
    const key = event.key.toLowerCase();
    if (ctrlOnly && key === "c" && this.terminal.hasSelection()) {
      // Ctrl+C with a selection copies (as in VS Code and Windows Terminal); without one it interrupts.
      if (event.shiftKey) {
        event.preventDefault(); // not DevTools' inspector
        document.execCommand("copy");
      }
      setTimeout(() => this.terminal.clearSelection());
      return false;
    }
    if (ctrlOnly && key === "v") return false; // the browser's paste event, which xterm handles
    return true;
  }
}
