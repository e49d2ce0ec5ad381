/** The reader's preferences (theme, font size), kept in localStorage: they hold nothing secret. */
export type ThemeChoice = "dark" | "light" | "system";

export interface Settings {
  theme: ThemeChoice;
  fontSize: number;
}

const KEY = "execmux.console.settings";
export const FONT_SIZE = { min: 9, max: 28, default: 14 } as const;
const DEFAULTS: Settings = { theme: "system", fontSize: FONT_SIZE.default };

type Listener = (settings: Settings) => void;

export class SettingsStore {
  private value: Settings;
  private readonly listeners = new Set<Listener>();
  private readonly systemDark = matchMedia("(prefers-color-scheme: dark)");

  constructor() {
    this.value = { ...DEFAULTS, ...readSaved() };
    this.systemDark.addEventListener("change", () => this.notify());
  }

  get current(): Settings {
    return this.value;
  }

  /** The theme in effect: "system" resolved with the browser's preference. */
  get effectiveTheme(): "dark" | "light" {
    if (this.value.theme !== "system") return this.value.theme;
    return this.systemDark.matches ? "dark" : "light";
  }

  update(change: Partial<Settings>): void {
    const next = { ...this.value, ...change };
    next.fontSize = Math.min(FONT_SIZE.max, Math.max(FONT_SIZE.min, Math.round(next.fontSize)));
    this.value = next;
    try {
      localStorage.setItem(KEY, JSON.stringify(next));
    } catch {
      // Storage may be full or disabled: the change still applies to this page.
    }
    this.notify();
  }

  onChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private notify(): void {
    for (const listener of this.listeners) listener(this.value);
  }
}

function readSaved(): Partial<Settings> {
  try {
    const saved = JSON.parse(localStorage.getItem(KEY) ?? "{}") as Partial<Settings>;
    const result: Partial<Settings> = {};
    if (saved.theme === "dark" || saved.theme === "light" || saved.theme === "system") result.theme = saved.theme;
    if (typeof saved.fontSize === "number" && Number.isFinite(saved.fontSize)) result.fontSize = saved.fontSize;
    return result;
  } catch {
    return {};
  }
}
