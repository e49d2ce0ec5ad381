/**
 * The terminal's colours for each theme. The page's own colours are CSS
 * variables in index.html (`:root[data-theme=...]`); these match them.
 */
import type { ITheme } from "@xterm/xterm";

export const TERMINAL_THEMES: Record<"dark" | "light", ITheme> = {
  dark: {
    background: "#14161b",
    foreground: "#d7dae0",
    cursor: "#e6e9ef",
    cursorAccent: "#14161b",
    selectionBackground: "#3a4b6b",
    black: "#1e2127",
    red: "#e06c75",
    green: "#98c379",
    yellow: "#d8b16a",
    blue: "#61afef",
    magenta: "#c678dd",
    cyan: "#56b6c2",
    white: "#c8ccd4",
    brightBlack: "#5c6370",
    brightRed: "#ef7d86",
    brightGreen: "#a9d48a",
    brightYellow: "#e8c27b",
    brightBlue: "#72c0ff",
    brightMagenta: "#d789ee",
    brightCyan: "#67c7d3",
    brightWhite: "#f0f2f5",
  },
  light: {
    background: "#ffffff",
    foreground: "#24292f",
    cursor: "#24292f",
    cursorAccent: "#ffffff",
    selectionBackground: "#b6d3ff",
    black: "#24292f",
    red: "#cf222e",
    green: "#116329",
    yellow: "#7d4e00",
    blue: "#0969da",
    magenta: "#8250df",
    cyan: "#1b7c83",
    white: "#6e7781",
    brightBlack: "#57606a",
    brightRed: "#a40e26",
    brightGreen: "#1a7f37",
    brightYellow: "#633c01",
    brightBlue: "#218bff",
    brightMagenta: "#a475f9",
    brightCyan: "#3192aa",
    brightWhite: "#8c959f",
  },
};

/** Monospace fonts in order of preference; DejaVu Sans Mono is on most Linux machines. */
export const TERMINAL_FONT = '"JetBrains Mono", "Cascadia Mono", "SF Mono", Menlo, "DejaVu Sans Mono", Consolas, "Liberation Mono", monospace';
