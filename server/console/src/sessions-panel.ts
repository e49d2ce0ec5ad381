/**
 * The Sessions panel: the sessions this console's credential may see
 * (session/list: its own identity's, or every one with an observer token),
 * their processes with command, state and start time, and watching any of
 * them live, read-only.
 */
import type { SessionSummary } from "@execmux/client";
import type { ConsoleApp, SidePanel } from "./console-app.js";
import { h } from "./dom.js";
import { icon } from "./icons.js";
import type { TerminalTab } from "./terminal-tab.js";

/** How often an open panel asks again (only while the page is visible). */
const REFRESH_MS = 5_000;

type SessionProcess = SessionSummary["processes"][number];

/** 14:03:07 today, else 2026-01-01 14:03. */
function when(ms: number): string {
  const date = new Date(ms);
  const today = new Date().toDateString() === date.toDateString();
  const time = date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", ...(today ? { second: "2-digit" } : {}) });
  return today ? time : `${date.toISOString().slice(0, 10)} ${time}`;
}

export class SessionsPanel implements SidePanel {
  readonly element = h("section", { class: "panel sessions-panel", "aria-label": "Sessions" });
  private readonly list = h("div", { class: "session-list", id: "session-list" });
  private readonly message = h("div", { class: "panel-message", hidden: true });
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(private readonly app: ConsoleApp) {
    const refresh = h("button", { class: "icon-button", type: "button", title: "Refresh", "aria-label": "Refresh" }, icon("refresh"));
    refresh.addEventListener("click", () => void this.refresh());
    const close = h("button", { class: "icon-button", type: "button", title: "Close", "aria-label": "Close" }, icon("close"));
    close.addEventListener("click", () => void app.togglePanel("sessions", false));
    this.element.append(
      h("header", { class: "panel-header" }, h("span", { class: "panel-title" }, icon("sessions"), "Sessions"), h("div", { class: "panel-actions" }, refresh, close)),
      this.message,
      this.list,
      h("footer", { class: "panel-footer" }, "Watching is read-only: the session's owner keeps it and is not slowed. Take over from a watched tab."),
    );
    this.timer = setInterval(() => document.visibilityState === "visible" && void this.refresh(), REFRESH_MS);
    void this.refresh();
  }

  follow(_tab: TerminalTab | undefined): void {
    // The listing does not depend on the active tab.
  }

  dispose(): void {
    clearInterval(this.timer);
  }

  async refresh(): Promise<void> {
    try {
      const sessions = await this.app.client.listSessions();
      // This console's own session first, then the others, newest first.
      sessions.sort((a, b) => Number(b.current) - Number(a.current) || b.createdAt - a.createdAt);
      this.list.replaceChildren(...sessions.map((session) => this.renderSession(session)));
      this.message.hidden = sessions.length > 1;
      this.message.textContent = "No other session to see: only this console's own. An agent using the same token, or an observer token, shows its sessions here.";
    } catch (error) {
      this.message.hidden = false;
      this.message.textContent = (error as Error).message;
    }
  }

  private renderSession(session: SessionSummary): HTMLElement {
    const name = session.current ? "This console" : session.clientName || "session";
    const state = session.attached ? "attached" : session.keepWhileRunning ? "detached, kept while running" : "detached";
    const badges = h("span", { class: "session-badges" }, h("span", { class: `session-badge ${session.attached ? "" : "detached"}` }, state));
    if (session.observers > 0) badges.append(h("span", { class: "session-badge watching", title: "connections watching it" }, icon("eye"), String(session.observers)));
    const header = h("div", { class: "session-header" }, h("span", { class: "session-name", title: name }, name), badges);
    const meta = h("div", { class: "session-meta" }, h("span", {}, `started ${when(session.createdAt)} · `, h("code", { title: session.sessionId }, session.sessionId.slice(0, 8))));
    if (!session.current) {
      const watch = h("button", { type: "button", class: "button compact", "data-action": "watch-session", title: "Open every process of this session, read-only, and those it starts later" }, icon("eye"), "Watch");
      watch.addEventListener("click", () => void this.app.watch(session.sessionId, name));
      meta.append(watch);
    }
    return h(
      "div",
      { class: `session${session.current ? " own" : ""}`, "data-session-id": session.sessionId },
      header,
      meta,
      ...(session.processes.length === 0 ? [h("div", { class: "process-row empty" }, "no processes")] : session.processes.map((process) => this.renderProcess(session, name, process))),
    );
  }

  private renderProcess(session: SessionSummary, owner: string, process: SessionProcess): HTMLElement {
    const command = process.argv.join(" ") + (process.argvTruncated ? " …" : "");
    const status = process.state === "running" ? "running" : process.exitCode === null ? process.state : `exit ${process.exitCode}`;
    const row = h(
      "div",
      { class: `process-row state-${process.state}`, "data-process-id": process.processId },
      h("span", { class: "process-state", title: process.state }),
      h("div", { class: "process-text" }, h("span", { class: "process-command", title: command }, command), h("span", { class: "process-meta" }, `${status} · started ${when(process.startedAt)}${process.tty ? " · terminal" : ""}`)),
    );
    if (!session.current) {
      const watch = h("button", { type: "button", class: "icon-button", "data-action": "watch-process", title: "Watch this process", "aria-label": `Watch ${command}` }, icon("eye"));
      watch.addEventListener("click", () => void this.app.watch(session.sessionId, owner, process.processId));
      row.append(watch);
    } else {
      const tab = this.app.tabs.find((candidate) => candidate.source.processId === process.processId && !candidate.options.sessionId);
      if (tab) {
        const show = h("button", { type: "button", class: "icon-button", title: "Show its tab", "aria-label": `Show ${command}` }, icon("terminal"));
        show.addEventListener("click", () => this.app.select(tab));
        row.append(show);
      }
    }
    return row;
  }
}
