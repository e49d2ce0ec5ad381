/**
 * The console once connected: terminals as tabs on one WebSocket, the
 * toolbar, the shortcuts, and the side panels (loaded when first opened).
 */
import type { ExecmuxClient, ProcessHandle } from "@execmux/client";
import type { DaemonAddress } from "./connection.js";
import { h } from "./dom.js";
import { icon } from "./icons.js";
import { saveState } from "./saved-state.js";
import { SearchBar } from "./search-bar.js";
import type { SettingsStore } from "./settings.js";
import { commandFor, type Command } from "./shortcuts.js";
import { TerminalTab, type TabSource } from "./terminal-tab.js";
import type { WatchedSession, WatchingApp } from "./watched-session.js";

export interface ConsoleElements {
  tabsBar: HTMLElement;
  panes: HTMLElement;
  status: HTMLElement;
  commandInput: HTMLInputElement;
  newTabForm: HTMLFormElement;
  sidePanel: HTMLElement;
  toolbar: { files: HTMLButtonElement; sessions: HTMLButtonElement; record: HTMLButtonElement; find: HTMLButtonElement };
}

/** What the side panels implement (loaded lazily: a console that never opens them never downloads them). */
export interface SidePanel {
  readonly element: HTMLElement;
  /** The folder it shows, for a panel that shows one: where dropped files go. */
  readonly directory?: string;
  /** The active tab changed (or the panel was just shown). */
  follow(tab: TerminalTab | undefined): void;
  dispose(): void;
}

type PanelName = "files" | "sessions";

export { CONNECT_OPTIONS } from "./connect-options.js";

export class ConsoleApp implements WatchingApp {
  readonly tabs: TerminalTab[] = [];
  active: TerminalTab | undefined;
  readonly search = new SearchBar();
  private readonly emptyState: HTMLElement;
  private panel: { name: PanelName; panel: SidePanel } | undefined;
  private shell: { argv: string[]; name: string; home: string } | undefined;
  /** Sessions of others being watched, by session id. */
  readonly watched = new Map<string, WatchedSession>();
  /** Connections of sessions taken over from another client (they hold those sessions now). */
  readonly takenOver: ExecmuxClient[] = [];

  constructor(
    readonly address: DaemonAddress,
    readonly client: ExecmuxClient,
    readonly settings: SettingsStore,
    readonly ui: ConsoleElements,
  ) {
    const open = h("button", { class: "button primary", type: "button" }, icon("terminal"), "Open a shell");
    open.addEventListener("click", () => void this.newTab(""));
    this.emptyState = h("div", { class: "empty-state" }, h("p", {}, "No terminals open."), open);
    ui.panes.append(this.search.element, this.emptyState);
    this.watchConnection();
    this.bindControls();
    settings.onChange(() => {
      for (const tab of this.tabs) tab.setAppearance(settings.current.fontSize, settings.effectiveTheme);
    });
  }

  // ------------------------------------------------------------------ tabs

  /** Starts a PTY process (a login shell without a command) and opens it in a new tab. */
  async newTab(command: string): Promise<TerminalTab> {
    const shell = await this.shellInfo();
    const trimmed = command.trim();
    const argv = trimmed ? ["/bin/sh", "-c", trimmed] : shell.argv;
    const size = this.active ? { cols: this.active.terminal.cols, rows: this.active.terminal.rows } : { cols: 100, rows: 30 };
    const handle = await this.client.start({ argv, tty: true, env: { TERM: "xterm-256color", COLORTERM: "truecolor" }, cwd: shell.home, ...size });
    return this.addTab(handle, trimmed || shell.name);
  }

  /**
   * A tab for a process of this session (interactive) or one watched from
   * elsewhere (read-only); `sessionId` names another session's process.
   * `at` puts it at that position instead of last.
   */
  addTab(source: TabSource | ProcessHandle, command: string, interactive = true, other: { sessionId?: string } = {}, at = this.tabs.length): TerminalTab {
    const size = this.active ? { cols: this.active.terminal.cols, rows: this.active.terminal.rows } : {};
    const tab = new TerminalTab(
      source,
      { command, interactive, fontSize: this.settings.current.fontSize, theme: this.settings.effectiveTheme, ...size, ...other },
      { select: (selected) => this.select(selected), close: (closed) => this.closeTab(closed), titleChanged: () => this.persist() },
    );
    const next = this.tabs[at];
    this.tabs.splice(at, 0, tab);
    if (next) next.button.before(tab.button);
    else this.ui.tabsBar.append(tab.button);
    this.ui.panes.append(tab.pane);
    tab.open();
    this.select(tab);
    this.persist();
    return tab;
  }

  select(tab: TerminalTab): void {
    this.active = tab;
    for (const other of this.tabs) other.setActive(other === tab);
    tab.button.scrollIntoView({ block: "nearest", inline: "nearest" });
    if (this.search.isOpen) this.search.attach(tab);
    this.panel?.panel.follow(tab);
    this.renderEmptyState();
  }

  /** Closing an interactive tab ends its process; closing a watched one only stops watching. */
  closeTab(tab: TerminalTab): void {
    const index = this.tabs.indexOf(tab);
    if (index < 0) return;
    if (tab.options.interactive && !tab.exited) void (tab.source as ProcessHandle).terminate?.().catch(() => undefined);
    this.tabs.splice(index, 1);
    tab.dispose();
    if (!tab.options.interactive && tab.options.sessionId) this.watched.get(tab.options.sessionId)?.forget(tab);
    this.persist();
    const next = this.tabs[Math.min(index, this.tabs.length - 1)];
    if (next) this.select(next);
    else {
      this.active = undefined;
      this.panel?.panel.follow(undefined);
      this.renderEmptyState();
    }
  }

  /** Puts an interactive tab for `source` where `old` was (a watched process, taken over). */
  replaceTab(old: TerminalTab, source: ProcessHandle, command: string, other: { sessionId?: string }): TerminalTab {
    const index = this.tabs.indexOf(old);
    this.tabs.splice(index, 1);
    old.dispose();
    return this.addTab(source, command, true, other, index);
  }

  /** Watches another session (opening a watcher if there is none yet), then shows `processId`, or every process. */
  async watch(sessionId: string, owner: string, processId?: string): Promise<void> {
    let watched = this.watched.get(sessionId);
    if (!watched) {
      const { WatchedSession } = await import("./watched-session.js");
      watched = await WatchedSession.open(this, sessionId, owner);
      this.watched.set(sessionId, watched);
    }
    await watched.show(processId);
  }

  /** A session taken over: this console holds it now, through `owner`. */
  tookOver(owner: ExecmuxClient): void {
    this.takenOver.push(owner);
  }

  run(command: Command): void {
    const index = this.active ? this.tabs.indexOf(this.active) : -1;
    switch (command) {
      case "newTab":
        void this.newTab("");
        return;
      case "closeTab":
        if (this.active) this.closeTab(this.active);
        return;
      case "nextTab":
      case "previousTab": {
        if (this.tabs.length === 0) return;
        const step = command === "nextTab" ? 1 : -1;
        this.select(this.tabs[(index + step + this.tabs.length) % this.tabs.length]!);
        return;
      }
      case "find":
        this.search.open(this.active);
        return;
      case "fontBigger":
      case "fontSmaller":
        this.settings.update({ fontSize: this.settings.current.fontSize + (command === "fontBigger" ? 1 : -1) });
        return;
      case "fontReset":
        this.settings.update({ fontSize: 14 });
        return;
      default: {
        const target = this.tabs[Number(command.slice("goToTab".length)) - 1];
        if (target) this.select(target);
      }
    }
  }

  persist(): void {
    const own = this.tabs.filter((tab) => tab.options.interactive && !tab.options.sessionId);
    saveState({ sessionId: this.client.sessionId, tabs: own.map((tab) => ({ processId: tab.source.processId, title: tab.options.command })) });
  }

  // ------------------------------------------------------------------ side panels

  async togglePanel(name: PanelName, open = this.panel?.name !== name): Promise<SidePanel | undefined> {
    const current = this.panel;
    if (current) {
      current.panel.dispose();
      this.panel = undefined;
    }
    this.ui.toolbar.files.setAttribute("aria-pressed", "false");
    this.ui.toolbar.sessions.setAttribute("aria-pressed", "false");
    if (!open) {
      this.ui.sidePanel.hidden = true;
      this.ui.sidePanel.replaceChildren();
      this.active?.fitToPane();
      return undefined;
    }
    const panel =
      name === "files"
        ? new (await import("./files-panel.js")).FilesPanel(this)
        : new (await import("./sessions-panel.js")).SessionsPanel(this);
    this.panel = { name, panel };
    this.ui.toolbar[name].setAttribute("aria-pressed", "true");
    this.ui.sidePanel.replaceChildren(panel.element);
    this.ui.sidePanel.hidden = false;
    panel.follow(this.active);
    this.active?.fitToPane();
    return panel;
  }

  /** Where dropped files go: the Files panel's folder, else the active terminal's, else the home folder. */
  async uploadDirectory(): Promise<string> {
    if (this.panel?.name === "files" && this.panel.panel.directory) return this.panel.panel.directory;
    const { RemoteFiles } = await import("./remote-files.js");
    const files = new RemoteFiles(this.client);
    const cwd = this.active?.options.interactive ? await files.workingDirectory(this.active.source.processId) : undefined;
    return cwd ?? (await files.home());
  }

  /** Downloads the active tab's recording (asciicast v2). */
  async downloadRecording(tab = this.active): Promise<void> {
    if (!tab) return;
    const { downloadRecording } = await import("./recording-download.js");
    await downloadRecording(this, tab);
  }

  // ------------------------------------------------------------------ wiring

  private async shellInfo(): Promise<{ argv: string[]; name: string; home: string }> {
    if (!this.shell) {
      const info = await this.client.request("environment/info", null).catch(() => undefined);
      const path = info?.shell.path || "/bin/bash";
      const name = info?.shell.name || path.split("/").pop() || "shell";
      // A login shell reads the profile, as a terminal emulator's would.
      this.shell = { argv: [path, "-l"], name, home: info?.userHomeDir ?? "/" };
    }
    return this.shell;
  }

  private renderEmptyState(): void {
    this.emptyState.hidden = this.tabs.length > 0;
  }

  private setStatus(text: string, state: string): void {
    this.ui.status.replaceChildren(h("span", { class: "status-dot" }), h("span", {}, text));
    this.ui.status.className = `status ${state}`;
    this.ui.status.title = `${text}\n${this.client.sessionId ? `session ${this.client.sessionId}` : ""}`;
  }

  private watchConnection(): void {
    this.setStatus("connected", "connected");
    this.client.on("disconnected", () => this.setStatus("disconnected", "disconnected"));
    this.client.on("reconnecting", ({ attempt }) => this.setStatus(`reconnecting (${attempt})`, "reconnecting"));
    this.client.on("resumed", () => this.setStatus("connected", "connected"));
    this.client.on("sessionLost", (error) => this.setStatus(`session lost: ${error.message}`, "lost"));
  }

  private bindControls(): void {
    const { ui } = this;
    ui.newTabForm.addEventListener("submit", (event) => {
      event.preventDefault();
      void this.newTab(ui.commandInput.value);
      ui.commandInput.value = "";
    });
    ui.toolbar.files.addEventListener("click", () => void this.togglePanel("files"));
    ui.toolbar.sessions.addEventListener("click", () => void this.togglePanel("sessions"));
    ui.toolbar.record.addEventListener("click", () => void this.downloadRecording());
    ui.toolbar.find.addEventListener("click", () => this.run("find"));
    window.addEventListener("keydown", (event) => {
      const command = commandFor(event);
      if (!command) return;
      event.preventDefault();
      this.run(command);
    });
    new ResizeObserver(() => this.active?.fitToPane()).observe(ui.panes);
    this.renderEmptyState();
  }
}
