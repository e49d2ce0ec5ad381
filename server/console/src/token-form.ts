/**
 * The page shown instead of the terminals when the console cannot connect:
 * a token form (a password field, with the error when the daemon refused the
 * token) or, when the daemon does not answer at all, what failed and a retry.
 */
import { h } from "./dom.js";
import { icon } from "./icons.js";

export type GateState =
  | { kind: "needed" }
  | { kind: "refused" }
  | { kind: "unreachable"; url: string; detail: string };

export class TokenForm {
  private readonly card = h("form", { class: "gate-card", novalidate: true, autocomplete: "off" });
  private answer: ((token: string | undefined) => void) | undefined;

  constructor(private readonly root: HTMLElement) {
    this.root.append(this.card);
    this.card.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
  }

  /**
   * Shows `state` and resolves with the token entered, or with undefined
   * when the person asked to retry an unreachable daemon.
   */
  ask(state: GateState): Promise<string | undefined> {
    this.render(state);
    this.root.hidden = false;
    document.body.classList.add("gated");
    return new Promise((resolve) => (this.answer = resolve));
  }

  hide(): void {
    this.root.hidden = true;
    document.body.classList.remove("gated");
  }

  /**
   * While a connection attempt is under way: the button says so and cannot
   * be pressed twice, the last attempt's error is gone (it is not this
   * attempt's answer), and the field waits for the answer.
   */
  private busy(): void {
    const button = this.card.querySelector("button[type=submit]") as HTMLButtonElement | null;
    if (button) {
      button.disabled = true;
      button.textContent = "Connecting…";
    }
    this.card.querySelector("#token-error")?.remove();
    const field = this.card.querySelector("input[name=token]") as HTMLInputElement | null;
    if (field) {
      field.readOnly = true;
      field.classList.remove("invalid");
      field.removeAttribute("aria-invalid");
      field.removeAttribute("aria-describedby");
    }
  }

  private submit(): void {
    const field = this.card.querySelector("input[name=token]") as HTMLInputElement | null;
    if (field && field.value.trim() === "") {
      field.classList.add("invalid");
      field.focus();
      return;
    }
    const answer = this.answer;
    if (!answer) return;
    this.answer = undefined;
    this.busy();
    answer(field ? field.value.trim() : undefined);
  }

  private render(state: GateState): void {
    const brand = h("div", { class: "gate-brand" }, icon("terminal"), h("span", {}, "execmux"));
    if (state.kind === "unreachable") {
      this.card.replaceChildren(
        brand,
        h("h1", {}, "Cannot reach the daemon"),
        h("p", { class: "gate-text" }, "The console could not open its connection to ", h("code", {}, state.url), "."),
        h("p", { class: "gate-error", role: "alert" }, icon("alert"), h("span", {}, state.detail)),
        h("p", { class: "gate-hint" }, "Check that the daemon is running and reachable from this browser, then retry."),
        h("div", { class: "gate-actions" }, h("button", { type: "submit", class: "button primary", id: "gate-retry" }, "Retry")),
      );
      (this.card.querySelector("button") as HTMLButtonElement).focus();
      return;
    }
    const refused = state.kind === "refused";
    const field = h("input", {
      type: "password",
      name: "token",
      id: "token",
      class: refused ? "field invalid" : "field",
      placeholder: "Token",
      autocomplete: "current-password",
      spellcheck: "false",
      "aria-invalid": refused ? "true" : undefined,
      "aria-describedby": refused ? "token-error" : undefined,
    });
    field.addEventListener("input", () => field.classList.remove("invalid"));
    const reveal = h("button", { type: "button", class: "field-addon", title: "Show the token", "aria-label": "Show the token" }, icon("eye"));
    reveal.addEventListener("click", () => {
      field.type = field.type === "password" ? "text" : "password";
      field.focus();
    });
    this.card.replaceChildren(
      brand,
      h("h1", {}, "This daemon needs a token"),
      h("p", { class: "gate-text" }, "Enter the token you were given for it. The console keeps it for this browser tab only."),
      h("label", { class: "field-label", for: "token" }, "Token"),
      h("div", { class: "field-group" }, field, reveal),
      ...(refused
        ? [h("p", { class: "gate-error", id: "token-error", role: "alert" }, icon("alert"), h("span", {}, "The daemon refused this token. Check it and try again."))]
        : []),
      h("div", { class: "gate-actions" }, h("button", { type: "submit", class: "button primary", id: "gate-connect" }, "Connect")),
    );
    field.focus();
  }
}
