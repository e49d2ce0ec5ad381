/** A modal question with styled buttons (never the browser's confirm()). */
import { h } from "./dom.js";
import { icon } from "./icons.js";

export interface Question {
  title: string;
  body: (string | Node)[];
  confirm: string;
  /** The confirm button warns (the action disturbs someone). */
  danger?: boolean;
}

export function ask(question: Question): Promise<boolean> {
  const confirm = h("button", { type: "button", class: `button ${question.danger ? "danger" : "primary"}`, id: "dialog-confirm" }, question.confirm);
  const cancel = h("button", { type: "button", class: "button", id: "dialog-cancel" }, "Cancel");
  const card = h(
    "div",
    { class: "dialog-card", role: "alertdialog", "aria-modal": "true", "aria-labelledby": "dialog-title" },
    h("h2", { id: "dialog-title" }, question.danger ? icon("alert") : null, question.title),
    h("div", { class: "dialog-body" }, ...question.body),
    h("div", { class: "dialog-actions" }, cancel, confirm),
  );
  const backdrop = h("div", { class: "dialog-backdrop" }, card);
  document.body.append(backdrop);
  cancel.focus();
  return new Promise((resolve) => {
    const finish = (answer: boolean) => {
      backdrop.remove();
      document.removeEventListener("keydown", onKey, true);
      resolve(answer);
    };
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== "Escape") return;
      event.stopPropagation();
      finish(false);
    };
    document.addEventListener("keydown", onKey, true);
    confirm.addEventListener("click", () => finish(true));
    cancel.addEventListener("click", () => finish(false));
    backdrop.addEventListener("click", (event) => event.target === backdrop && finish(false));
  });
}
