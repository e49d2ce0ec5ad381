/** Find in the active terminal's output and scrollback (xterm's search addon), with match counts. */
import type { ISearchOptions } from "@xterm/addon-search";
import { h } from "./dom.js";
import { icon } from "./icons.js";
import type { TerminalTab } from "./terminal-tab.js";

export class SearchBar {
  readonly element = h("div", { class: "search-bar", role: "search", hidden: true });
  private readonly input = h("input", { class: "field compact", type: "search", placeholder: "Find", "aria-label": "Find in terminal", spellcheck: "false" });
  private readonly count = h("span", { class: "search-count", "aria-live": "polite" });
  private readonly caseToggle = toggle("Aa", "Match case");
  private readonly regexToggle = toggle(".*", "Regular expression");
  private tab: TerminalTab | undefined;
  private offResults: { dispose(): void } | undefined;

  constructor() {
    const previous = iconButton("up", "Previous match (Shift+Enter)", () => this.find(false));
    const next = iconButton("down", "Next match (Enter)", () => this.find(true));
    const close = iconButton("close", "Close (Escape)", () => this.close());
    this.element.append(this.input, this.count, this.caseToggle, this.regexToggle, previous, next, close);
    this.input.addEventListener("input", () => this.find(true, true));
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        this.find(!event.shiftKey);
      } else if (event.key === "Escape") {
        event.preventDefault();
        this.close();
      }
    });
    for (const button of [this.caseToggle, this.regexToggle]) {
      button.addEventListener("click", () => {
        button.setAttribute("aria-pressed", String(button.getAttribute("aria-pressed") !== "true"));
        this.find(true, true);
      });
    }
  }

  get isOpen(): boolean {
    return !this.element.hidden;
  }

  open(tab: TerminalTab | undefined): void {
    this.attach(tab);
    this.element.hidden = false;
    const selection = tab?.terminal.getSelection();
    if (selection && !selection.includes("\n")) this.input.value = selection;
    this.input.focus();
    this.input.select();
    if (this.input.value) this.find(true, true);
  }

  /** Follows the active tab while open. */
  attach(tab: TerminalTab | undefined): void {
    if (tab === this.tab) return;
    this.tab?.search.clearDecorations();
    this.offResults?.dispose();
    this.tab = tab;
    this.offResults = tab?.search.onDidChangeResults(({ resultIndex, resultCount }) => {
      this.count.textContent = resultCount === 0 ? "No results" : `${resultIndex >= 0 ? resultIndex + 1 : "?"} of ${resultCount}${resultCount >= 1000 ? "+" : ""}`;
    });
    this.count.textContent = "";
  }

  close(): void {
    this.element.hidden = true;
    this.tab?.search.clearDecorations();
    this.tab?.terminal.focus();
  }

  private find(forward: boolean, incremental = false): void {
    const tab = this.tab;
    const term = this.input.value;
    if (!tab) return;
    if (!term) {
      tab.search.clearDecorations();
      this.count.textContent = "";
      return;
    }
    const styles = getComputedStyle(document.documentElement);
    const options: ISearchOptions = {
      caseSensitive: this.caseToggle.getAttribute("aria-pressed") === "true",
      regex: this.regexToggle.getAttribute("aria-pressed") === "true",
      incremental: incremental && forward,
      decorations: {
        matchBackground: styles.getPropertyValue("--search-match").trim() || "#5a4a00",
        matchOverviewRuler: "#d8b16a",
        activeMatchBackground: styles.getPropertyValue("--search-active").trim() || "#b8860b",
        activeMatchColorOverviewRuler: "#ffb000",
      },
    };
    try {
      if (forward) tab.search.findNext(term, options);
      else tab.search.findPrevious(term, options);
    } catch {
      this.count.textContent = "Invalid expression";
    }
  }
}

function toggle(text: string, title: string): HTMLButtonElement {
  return h("button", { class: "icon-button text-toggle", type: "button", title, "aria-label": title, "aria-pressed": "false" }, text);
}

function iconButton(name: Parameters<typeof icon>[0], title: string, action: () => void): HTMLButtonElement {
  const button = h("button", { class: "icon-button", type: "button", title, "aria-label": title }, icon(name));
  button.addEventListener("click", action);
  return button;
}
