/** The CLI's reading of its own terminal's size (commands/terminal.ts). */
import { afterEach, describe, expect, it } from "vitest";
import { terminalSize } from "../server/src/commands/terminal.js";

const saved = { isTTY: process.stdout.isTTY, columns: process.stdout.columns, rows: process.stdout.rows };
const pretend = (isTTY: boolean, columns: number, rows: number) => Object.assign(process.stdout, { isTTY, columns, rows });

afterEach(() => {
  Object.assign(process.stdout, saved);
});

describe("terminalSize", () => {
  it("is the terminal's columns and rows", () => {
    pretend(true, 120, 40);
    expect(terminalSize()).toEqual({ cols: 120, rows: 40 });
  });

  it("is nothing for a terminal that reports no size (script, ssh without one), so the daemon's default applies", () => {
    pretend(true, 0, 0);
    expect(terminalSize()).toBeUndefined();
  });

  it("is nothing when stdout is not a terminal", () => {
    pretend(false, 120, 40);
    expect(terminalSize()).toBeUndefined();
  });
});
