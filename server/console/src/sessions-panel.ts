/**
 * The Sessions panel: the sessions the console's credential may see, their
 * processes (command, state, start time), and a tab for any of them.
 */
import type { ConsoleApp, SidePanel } from "./console-app.js";
import { h } from "./dom.js";
import { icon } from "./icons.js";
import { sessionsSource, type ProcessSummary, type SessionSummary, type SessionsSource } from "./sessions-source.js";
import type { TerminalTab } from "./terminal-tab.js";

export class SessionsPanel implements SidePanel {
  readonly element = h("section", { class: "panel sessions-panel", "aria-label": "Sessions" });
  private readonly list = h("div", { class: "session-list", id: "session-list" });
  private readonly message = h("div", { class: "panel-message", hidden: true });
  private readonly source: SessionsSource;

  constructor(app: ConsoleApp) {
    this.source = sessionsSource(app.client);
    const refresh = h("button", { class: "icon-button", type: "button", title: "Refresh", "aria-label": "Refresh" }, icon("refresh"));
    refresh.addEventListener("click", () => void this.refresh());
    const close = h("button", { class: "icon-button", type: "button", title: "Close", "aria-label": "Close" }, icon("close"));
    close.addEventListener("click", () => void app.togglePanel("sessions", false));
    this.element.append(
      h("header", { class: "panel-header" }, h("span", { class: "panel-title" }, icon("sessions"), "Sessions"), h("div", { class: "panel-actions" }, refresh, close)),
      this.message,
      this.list,
    );
    void this.refresh();
  }

  follow(_tab: TerminalTab | undefined): void {
    // The listing does not depend on the active tab.
  }

  dispose(): void {}

  async refresh(): Promise<void> {
    try {
      const sessions = await this.source.list();
      this.list.replaceChildren(...sessions.map((session) => this.renderSession(session)));
      this.message.hidden = this.source.listsOthers;
      this.message.textContent = this.source.listsOthers ? "" : "This daemon lists only this console's own session.";
    } catch (error) {
      this.message.hidden = false;
      this.message.textContent = (error as Error).message;
    }
  }

  private renderSession(session: SessionSummary): HTMLElement {
    return h(
      "div",
      { class: `session${session.own ? " own" : ""}`, "data-session-id": session.sessionId },
      h(
        "div",
        { class: "session-header" },
        h("span", { class: "session-name" }, session.own ? "This console" : session.clientName ?? "session"),
        h("code", { class: "session-id", title: session.sessionId }, session.sessionId.slice(0, 8)),
      ),
      ...session.processes.map((process) => this.renderProcess(session, process)),
    );
  }

  private renderProcess(_session: SessionSummary, process: ProcessSummary): HTMLElement {
    const command = process.command?.join(" ") ?? process.processId;
    return h(
      "div",
      { class: `process-row state-${process.state}`, "data-process-id": process.processId },
      h("span", { class: "process-state", title: process.state }),
      h("span", { class: "process-command", title: command }, command),
      h("span", { class: "process-meta" }, process.exitCode === null ? process.state : `exit ${process.exitCode}`),
    );
  }
}
