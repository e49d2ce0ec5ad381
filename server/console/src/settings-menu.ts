/** The settings popover: theme, font size, and the keyboard shortcuts. */
import { h } from "./dom.js";
import { icon } from "./icons.js";
import { FONT_SIZE, type SettingsStore, type ThemeChoice } from "./settings.js";
import { SHORTCUT_HELP } from "./shortcuts.js";

export class SettingsMenu {
  readonly element = h("div", { class: "popover", id: "settings-popover", role: "dialog", "aria-label": "Settings", hidden: true });
  private readonly size = h("output", { class: "stepper-value", id: "font-size" });

  constructor(
    private readonly settings: SettingsStore,
    private readonly anchor: HTMLElement,
  ) {
    const themes: [ThemeChoice, string][] = [
      ["dark", "Dark"],
      ["light", "Light"],
      ["system", "System"],
    ];
    const segmented = h("div", { class: "segmented", role: "radiogroup", "aria-label": "Theme" });
    for (const [value, label] of themes) {
      const option = h("button", { type: "button", role: "radio", class: "segment", "data-theme-choice": value }, label);
      option.addEventListener("click", () => settings.update({ theme: value }));
      segmented.append(option);
    }
    const smaller = h("button", { type: "button", class: "icon-button", id: "font-smaller", title: "Smaller (Ctrl+Shift+−)", "aria-label": "Smaller font" }, icon("minus"));
    const bigger = h("button", { type: "button", class: "icon-button", id: "font-bigger", title: "Bigger (Ctrl+Shift+=)", "aria-label": "Bigger font" }, icon("plus"));
    smaller.addEventListener("click", () => settings.update({ fontSize: settings.current.fontSize - 1 }));
    bigger.addEventListener("click", () => settings.update({ fontSize: settings.current.fontSize + 1 }));
    const shortcuts = h("dl", { class: "shortcuts" });
    for (const { keys, what } of SHORTCUT_HELP) shortcuts.append(h("dt", {}, ...keys.split(" ").map((part) => (/^[/…]$/.test(part) ? ` ${part} ` : h("kbd", {}, part)))), h("dd", {}, what));
    this.element.append(
      h("div", { class: "popover-row" }, h("span", { class: "popover-label" }, "Theme"), segmented),
      h("div", { class: "popover-row" }, h("span", { class: "popover-label" }, "Font size"), h("div", { class: "stepper" }, smaller, this.size, bigger)),
      h("div", { class: "popover-section" }, h("span", { class: "popover-label" }, "Keyboard"), shortcuts),
    );
    settings.onChange(() => this.render());
    this.render();
    anchor.addEventListener("click", (event) => {
      event.stopPropagation();
      this.toggle();
    });
    document.addEventListener("click", (event) => {
      if (!this.element.hidden && !this.element.contains(event.target as Node)) this.toggle(false);
    });
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && !this.element.hidden) this.toggle(false);
    });
  }

  toggle(open = this.element.hidden): void {
    this.element.hidden = !open;
    this.anchor.setAttribute("aria-expanded", String(open));
  }

  private render(): void {
    const { theme, fontSize } = this.settings.current;
    for (const option of this.element.querySelectorAll<HTMLElement>("[data-theme-choice]")) {
      const chosen = option.dataset.themeChoice === theme;
      option.classList.toggle("chosen", chosen);
      option.setAttribute("aria-checked", String(chosen));
    }
    this.size.textContent = `${fontSize}px`;
    (this.element.querySelector("#font-smaller") as HTMLButtonElement).disabled = fontSize <= FONT_SIZE.min;
    (this.element.querySelector("#font-bigger") as HTMLButtonElement).disabled = fontSize >= FONT_SIZE.max;
  }
}
