/**
 * The execmux web console: terminals as tabs on ONE WebSocket, each a PTY
 * process. The SDK reconnects and resumes by itself; a page reload
 * reattaches to the same session (kept in sessionStorage) and replays each
 * terminal's retained output.
 */
import { connect, type ExecmuxClient, type ProcessHandle } from "@execmux/client";
import { forgetToken, loadState, loadToken, saveState, saveToken } from "./saved-state.js";
import { webSocketUrlOf } from "./socket-url.js";
import { TerminalTab } from "./terminal-tab.js";

const tabsBar = document.getElementById("tabs")!;
const panes = document.getElementById("terminals")!;
const status = document.getElementById("status")!;
const commandInput = document.getElementById("command") as HTMLInputElement;
const url = webSocketUrlOf(location);

const tabs: TerminalTab[] = [];
let active: TerminalTab | undefined;
let client: ExecmuxClient;

function setStatus(text: string, state: string): void {
  status.textContent = text;
  status.className = state;
}

function persist(): void {
  saveState({ sessionId: client.sessionId, tabs: tabs.map((tab) => ({ processId: tab.handle.processId, title: tab.title })) });
}

function select(tab: TerminalTab): void {
  active = tab;
  for (const other of tabs) {
    other.pane.classList.toggle("active", other === tab);
    other.button.classList.toggle("active", other === tab);
  }
  tab.fitToPane();
  tab.terminal.focus();
}

function addTab(handle: ProcessHandle, title: string): TerminalTab {
  const tab = new TerminalTab(handle, title, select, closeTab);
  tabs.push(tab);
  tabsBar.append(tab.button);
  panes.append(tab.pane);
  select(tab);
  tab.open();
  persist();
  return tab;
}

function closeTab(tab: TerminalTab): void {
  void tab.handle.terminate().catch(() => undefined);
  tabs.splice(tabs.indexOf(tab), 1);
  tab.dispose();
  persist();
  const next = tabs.at(-1);
  if (next) select(next);
}

async function newTab(command: string): Promise<TerminalTab> {
  const argv = command.trim() ? ["/bin/sh", "-c", command] : ["/bin/bash", "-l"];
  const size = active ? { cols: active.terminal.cols, rows: active.terminal.rows } : { cols: 100, rows: 30 };
  const handle = await client.start({ argv, tty: true, env: { TERM: "xterm-256color" }, cwd: "/", ...size });
  return addTab(handle, command.trim() || "shell");
}

const CONSOLE_ACK_WINDOW_BYTES = 512 * 1024;

/** Connects, asking for a token only if the daemon refuses to talk without one. */
async function connectWithToken(resume?: { sessionId: string; processes: string[] }): Promise<ExecmuxClient> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const token = loadToken();
    try {
      return await connect(url, {
        clientName: "execmux-console",
        // Like VS Code's terminals: at most this much output rendered-but-unseen per tab.
        ackWindowBytes: CONSOLE_ACK_WINDOW_BYTES,
        manualAcks: true,
        ...(token ? { token } : {}),
        ...(resume ? { resume } : {}),
      });
    } catch (error) {
      // A browser cannot see the HTTP status of a refused upgrade: assume it was the token.
      if ((error as Error).name === "RpcRequestError") throw error;
      forgetToken();
      const entered = prompt("This execmux daemon needs a token (kept for this tab only):");
      if (!entered) throw error;
      saveToken(entered);
    }
  }
  throw new Error("could not authenticate");
}

async function start(): Promise<void> {
  const saved = loadState();
  try {
    client = await connectWithToken(saved ? { sessionId: saved.sessionId, processes: saved.tabs.map((tab) => tab.processId) } : undefined);
    for (const tab of saved?.tabs ?? []) {
      const handle = client.handle(tab.processId);
      if (handle) addTab(handle, tab.title);
    }
  } catch (error) {
    if (!saved) throw error;
    // The saved session expired: start afresh.
    client = await connectWithToken();
  }
  persist();
  setStatus("connected", "connected");
  client.on("disconnected", () => setStatus("disconnected", "disconnected"));
  client.on("reconnecting", ({ attempt }) => setStatus(`reconnecting (attempt ${attempt})`, "reconnecting"));
  client.on("resumed", () => setStatus("connected", "connected"));
  client.on("sessionLost", (error) => setStatus(`session lost: ${error.message}`, "lost"));
  if (tabs.length === 0) await newTab("");
}

document.getElementById("new-tab")!.addEventListener("click", () => {
  void newTab(commandInput.value);
  commandInput.value = "";
});
commandInput.addEventListener("keydown", (event) => {
  if (event.key !== "Enter") return;
  void newTab(commandInput.value);
  commandInput.value = "";
});
window.addEventListener("resize", () => active?.fitToPane());

// For automation and debugging: the tabs and the client.
(window as unknown as { execmuxConsole: unknown }).execmuxConsole = {
  tabs,
  newTab,
  closeTab,
  select,
  get client() {
    return client;
  },
};

start().catch((error: unknown) => setStatus(`error: ${(error as Error).message}`, "lost"));
