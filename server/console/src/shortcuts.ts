/**
 * The console's keyboard shortcuts. Browsers keep Ctrl+T, Ctrl+W, Ctrl+Tab
 * and Ctrl+PageUp/PageDown for their own tabs, and Ctrl+letter belongs to
 * the programs in the terminal, so tab commands use Alt+Shift.
 */
export type Command =
  | "newTab"
  | "closeTab"
  | "nextTab"
  | "previousTab"
  | `goToTab${1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9}`
  | "find"
  | "fontBigger"
  | "fontSmaller"
  | "fontReset";

export interface ShortcutHelp {
  readonly keys: string;
  readonly what: string;
}

export const SHORTCUT_HELP: readonly ShortcutHelp[] = [
  { keys: "Alt+Shift+T", what: "New tab (a shell)" },
  { keys: "Alt+Shift+W", what: "Close tab" },
  { keys: "Alt+Shift+→ / ←", what: "Next / previous tab" },
  { keys: "Alt+1 … Alt+9", what: "Go to tab 1 … 9" },
  { keys: "Ctrl+Shift+F", what: "Find in the terminal" },
  { keys: "Ctrl+C / Ctrl+Shift+C", what: "Copy the selection (Ctrl+C without one interrupts)" },
  { keys: "Ctrl+V / Ctrl+Shift+V", what: "Paste" },
  { keys: "Ctrl+Shift+= / − / 0", what: "Font bigger / smaller / default" },
];

type KeyLike = Pick<KeyboardEvent, "key" | "code" | "ctrlKey" | "altKey" | "shiftKey" | "metaKey">;

export function commandFor(event: KeyLike): Command | undefined {
  if (event.metaKey) return undefined;
  if (event.altKey && event.shiftKey && !event.ctrlKey) {
    switch (event.code) {
      case "KeyT":
        return "newTab";
      case "KeyW":
        return "closeTab";
      case "ArrowRight":
        return "nextTab";
      case "ArrowLeft":
        return "previousTab";
    }
    return undefined;
  }
  if (event.altKey && !event.shiftKey && !event.ctrlKey && /^Digit[1-9]$/.test(event.code)) {
    return `goToTab${Number(event.code.slice(5)) as 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9}`;
  }
  if (event.ctrlKey && event.shiftKey && !event.altKey) {
    switch (event.code) {
      case "KeyF":
        return "find";
      case "Equal":
      case "NumpadAdd":
        return "fontBigger";
      case "Minus":
      case "NumpadSubtract":
        return "fontSmaller";
      case "Digit0":
      case "Numpad0":
        return "fontReset";
    }
  }
  return undefined;
}

export const isAppShortcut = (event: KeyLike) => commandFor(event) !== undefined;
