/**
 * Watching another connection's session (an agent's): a second WebSocket
 * that observes it read-only (the daemon's observers: history from the start
 * of what it retains, then live). Its processes open as read-only tabs. The
 * session's owner keeps its session and notices nothing, until someone here
 * takes it over, which happens only on an explicit, confirmed action.
 */
import { connect, observe, RpcRequestError, type ExecmuxClient, type ProcessHandle } from "@execmux/client";
import { CONNECT_OPTIONS } from "./connect-options.js";
import type { DaemonAddress } from "./connection.js";
import { ask } from "./dialog.js";
import { h } from "./dom.js";
import { icon } from "./icons.js";
import { loadToken } from "./saved-state.js";
import type { TerminalTab, TabSource } from "./terminal-tab.js";

/** What a watched session needs of the console (console-app.ts implements it), so it never imports the app. */
export interface WatchingApp {
  readonly address: DaemonAddress;
  readonly watched: Map<string, WatchedSession>;
  addTab(source: TabSource | ProcessHandle, command: string, interactive?: boolean, other?: { sessionId?: string }): TerminalTab;
  replaceTab(old: TerminalTab, source: ProcessHandle, command: string, other: { sessionId?: string }): TerminalTab;
  closeTab(tab: TerminalTab): void;
  select(tab: TerminalTab): void;
  tookOver(owner: ExecmuxClient): void;
}

const commandOf = (handle: ProcessHandle) => handle.origin?.argv.join(" ") || handle.processId;

export class WatchedSession {
  private readonly handles = new Map<string, ProcessHandle>();
  private readonly tabs = new Map<string, TerminalTab>();
  /** Every process gets a tab, those started later too. */
  private following = false;
  private ended = false;

  private constructor(
    private readonly app: WatchingApp,
    readonly sessionId: string,
    /** Who holds it, as the listing named it. */
    readonly owner: string,
    private readonly watcher: ExecmuxClient,
  ) {
    watcher.onProcess((handle) => {
      this.handles.set(handle.processId, handle);
      if (this.following) this.openTab(handle);
    });
    watcher.on("sessionLost", (error) => this.markEnded(error.message));
  }

  static async open(app: WatchingApp, sessionId: string, owner: string): Promise<WatchedSession> {
    const token = loadToken();
    const watcher = await observe(app.address.rpcUrl, sessionId, { clientName: "execmux-console (watching)", ...(token ? { token } : {}) });
    return new WatchedSession(app, sessionId, owner, watcher);
  }

  get tabCount(): number {
    return this.tabs.size;
  }

  /** Opens a tab for `processId`, or for every process (and each one started later) without one. */
  async show(processId?: string): Promise<void> {
    if (processId === undefined) {
      this.following = true;
      for (const handle of this.handles.values()) this.openTab(handle);
      return;
    }
    // A process announced a moment after the listing: wait for its announcement.
    const handle = this.handles.get(processId) ?? (await this.announced(processId));
    const tab = this.tabs.get(processId) ?? this.openTab(handle);
    this.app.select(tab);
  }

  /** A tab of this session was closed; the last one ends the watching. */
  forget(tab: TerminalTab): void {
    this.tabs.delete(tab.source.processId);
    if (this.tabs.size === 0) this.close();
  }

  close(): void {
    this.following = false;
    this.watcher.close();
    this.app.watched.delete(this.sessionId);
  }

  /**
   * Makes the session this console's to type into: resumes it with
   * `takeover`, which disconnects its current holder (close code 4001; the
   * SDK does not take it back by itself). Only the session's own identity
   * may; observer rights do not.
   */
  async takeOver(): Promise<boolean> {
    const confirmed = await ask({
      title: "Take over this session?",
      body: [
        h("p", {}, "The connection holding it now (", h("strong", {}, this.owner), ") will be disconnected, and its processes will take your typing."),
        h("p", {}, "Its processes keep running. The agent can take the session back the same way."),
      ],
      confirm: "Take over",
      danger: true,
    });
    if (!confirmed) return false;
    const token = loadToken();
    let owner: ExecmuxClient;
    try {
      owner = await connect(this.app.address.rpcUrl, {
        ...CONNECT_OPTIONS,
        ...(token ? { token } : {}),
        resume: { sessionId: this.sessionId, processes: [...this.tabs.keys()], takeover: true },
      });
    } catch (error) {
      const message =
        error instanceof RpcRequestError && error.code === -32600
          ? "Only the credential that made this session can take it over (watching rights are not enough)."
          : (error as Error).message;
      for (const tab of this.tabs.values()) tab.setBanner(this.banner(message));
      return false;
    }
    this.watcher.close();
    this.app.watched.delete(this.sessionId);
    for (const [processId, tab] of [...this.tabs]) {
      const handle = owner.handle(processId);
      this.tabs.delete(processId);
      if (handle) this.app.replaceTab(tab, handle, tab.options.command, { sessionId: this.sessionId });
      else this.app.closeTab(tab);
    }
    this.app.tookOver(owner);
    return true;
  }

  private announced(processId: string): Promise<ProcessHandle> {
    return new Promise((resolve) => {
      const off = this.watcher.onProcess((handle) => {
        if (handle.processId !== processId) return;
        queueMicrotask(() => off());
        resolve(handle);
      });
    });
  }

  private openTab(handle: ProcessHandle): TerminalTab {
    const existing = this.tabs.get(handle.processId);
    if (existing) return existing;
    const watcher = this.watcher;
    const source: TabSource = {
      processId: handle.processId,
      onOutput: (listener) => handle.onOutput(listener),
      onGap: (listener) => handle.onGap(listener),
      onExit: (listener) => handle.onExit(listener),
      ack: (bytes) => handle.ack(bytes),
      readRetained: (afterSeq, maxBytes) => watcher.read(handle.processId, { afterSeq, maxBytes, timestamps: true }),
    };
    const tab = this.app.addTab(source, commandOf(handle), false, { sessionId: this.sessionId });
    this.tabs.set(handle.processId, tab);
    tab.setBanner(this.banner());
    // Keys go nowhere here: say so where the eye is, rather than ignore them silently.
    tab.pane.addEventListener("keydown", () => {
      const banner = tab.pane.querySelector(".pane-banner");
      banner?.classList.remove("flash");
      void (banner as HTMLElement | null)?.offsetWidth;
      banner?.classList.add("flash");
    });
    return tab;
  }

  private banner(problem?: string): HTMLElement {
    const takeOver = h("button", { type: "button", class: "button compact", "data-action": "take-over" }, icon("key"), "Take over");
    takeOver.addEventListener("click", () => void this.takeOver());
    return h(
      "div",
      { class: `watch-banner${problem ? " problem" : ""}` },
      icon(problem ? "alert" : "eye"),
      problem
        ? h("span", {}, problem)
        : h("span", {}, "Watching ", h("strong", {}, this.owner), `'s session ${this.sessionId.slice(0, 8)}, read-only: what you type goes nowhere.`),
      h("span", { class: "spacer" }),
      this.ended ? null : takeOver,
    );
  }

  private markEnded(reason: string): void {
    this.ended = true;
    for (const tab of this.tabs.values()) {
      tab.setBanner(this.banner(`Not watching any more: ${reason}`));
    }
  }
}
