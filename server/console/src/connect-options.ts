/** How the console connects: its name, and flow control sized for terminals. */
const CONSOLE_ACK_WINDOW_BYTES = 512 * 1024;
export const CONNECT_OPTIONS = {
  clientName: "execmux-console",
  // Like VS Code's terminals: at most this much output rendered-but-unseen per tab.
  ackWindowBytes: CONSOLE_ACK_WINDOW_BYTES,
  manualAcks: true,
} as const;
