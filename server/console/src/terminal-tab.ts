/** One tab: an xterm.js terminal bound to one PTY process. */
import { Terminal } from "@xterm/xterm";
import { FitAddon } from "@xterm/addon-fit";
import type { ProcessHandle } from "@execmux/client";

export class TerminalTab {
  readonly terminal = new Terminal({ cursorBlink: true, scrollback: 10_000, fontSize: 13 });
  readonly pane = document.createElement("div");
  readonly button = document.createElement("div");
  private readonly fit = new FitAddon();

  constructor(
    readonly handle: ProcessHandle,
    readonly title: string,
    onSelect: (tab: TerminalTab) => void,
    onClose: (tab: TerminalTab) => void,
  ) {
    this.pane.className = "terminal-pane";
    this.pane.dataset.processId = handle.processId;
    this.button.className = "tab";
    this.button.dataset.processId = handle.processId;
    const label = document.createElement("span");
    label.textContent = title;
    const close = document.createElement("button");
    close.className = "close";
    close.textContent = "×";
    close.title = "Close (terminates the process)";
    close.addEventListener("click", (event) => {
      event.stopPropagation();
      onClose(this);
    });
    this.button.append(label, close);
    this.button.addEventListener("click", () => onSelect(this));

    this.terminal.loadAddon(this.fit);
    // xterm decodes UTF-8 itself, statefully, so a character split across chunks is fine.
    // Credit goes back only once xterm has processed the bytes: a flood is
    // paced by rendering, and Ctrl-C is not stuck behind megabytes in the page.
    handle.onOutput((event) => this.terminal.write(event.data, () => handle.ack(event.data.length)));
    handle.onGap((gap) =>
      this.terminal.write(`\r\n\x1b[30;43m[execmux: ${gap.bytes}${gap.bytesExact ? "" : "+"} bytes of output were lost while disconnected]\x1b[0m\r\n`),
    );
    handle.onExit((code) => {
      this.terminal.write(`\r\n\x1b[7m[process exited with code ${code}]\x1b[0m\r\n`);
      this.button.classList.add("exited");
    });
    this.terminal.onData((data) => void handle.write(data).catch(() => undefined));
    this.terminal.onResize(({ cols, rows }) => void handle.resize(cols, rows).catch(() => undefined));
  }

  /** Opens the terminal in its pane (the pane must be in the document). */
  open(): void {
    this.terminal.open(this.pane);
    this.fitToPane();
  }

  fitToPane(): void {
    if (this.pane.classList.contains("active")) this.fit.fit();
  }

  /** The terminal's text, for tests and screenshots. */
  text(): string {
    const buffer = this.terminal.buffer.active;
    const lines: string[] = [];
    for (let index = 0; index < buffer.length; index++) lines.push(buffer.getLine(index)?.translateToString(true) ?? "");
    return lines.join("\n").trimEnd();
  }

  dispose(): void {
    this.terminal.dispose();
    this.pane.remove();
    this.button.remove();
  }
}
