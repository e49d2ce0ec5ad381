/**
 * The execmux web console: terminals as tabs on ONE WebSocket. The SDK
 * reconnects and resumes by itself; a page reload reattaches to the same
 * session (kept in sessionStorage) and replays each terminal's retained
 * output.
 */
import { RpcRequestError, type ExecmuxClient } from "@execmux/client";
import { connectThroughGate, daemonAddress } from "./connection.js";
import { CONNECT_OPTIONS, ConsoleApp } from "./console-app.js";
import { registerDropTarget } from "./drop-target.js";
import { forgetState, loadState, takeTokenFromFragment } from "./saved-state.js";
import { SettingsMenu } from "./settings-menu.js";
import { SettingsStore } from "./settings.js";
import { TokenForm } from "./token-form.js";

const byId = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

const settings = new SettingsStore();
const applyTheme = () => (document.documentElement.dataset.theme = settings.effectiveTheme);
applyTheme();
settings.onChange(applyTheme);
byId("settings-host").append(new SettingsMenu(settings, byId("settings-button")).element);

const address = daemonAddress(location);
const form = new TokenForm(byId("gate"));
let app: ConsoleApp | undefined;

async function start(): Promise<void> {
  takeTokenFromFragment();
  const saved = loadState();
  let client: ExecmuxClient;
  let resumed = false;
  try {
    client = await connectThroughGate(address, form, {
      ...CONNECT_OPTIONS,
      ...(saved ? { resume: { sessionId: saved.sessionId, processes: saved.tabs.map((tab) => tab.processId) } } : {}),
    });
    resumed = saved !== undefined;
  } catch (error) {
    if (!(saved && error instanceof RpcRequestError)) throw error;
    // The saved session expired: start afresh.
    forgetState();
    client = await connectThroughGate(address, form, CONNECT_OPTIONS);
  }
  document.body.classList.add("connected");
  app = new ConsoleApp(address, client, settings, {
    tabsBar: byId("tabs"),
    panes: byId("terminals"),
    status: byId("status"),
    commandInput: byId<HTMLInputElement>("command"),
    newTabForm: byId<HTMLFormElement>("new-tab-form"),
    sidePanel: byId("side-panel"),
    toolbar: {
      files: byId<HTMLButtonElement>("toggle-files"),
      sessions: byId<HTMLButtonElement>("toggle-sessions"),
      record: byId<HTMLButtonElement>("record"),
      find: byId<HTMLButtonElement>("find"),
    },
  });
  if (resumed) {
    for (const tab of saved!.tabs) {
      const handle = client.handle(tab.processId);
      if (handle) app.addTab(handle, tab.title);
    }
  }
  app.persist();
  registerDropTarget(app);
  if (app.tabs.length === 0) await app.newTab("");
}

// For automation and debugging: the app (tabs, client) once connected.
(window as unknown as { execmuxConsole: unknown }).execmuxConsole = {
  get app() {
    return app;
  },
  get tabs() {
    return app?.tabs ?? [];
  },
  get client() {
    return app?.client;
  },
};

start().catch((error: unknown) => {
  const status = byId("status");
  status.className = "status lost";
  status.textContent = `error: ${(error as Error).message}`;
});
