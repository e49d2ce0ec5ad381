/** The log writer's redaction and repeat limit as pure units (the daemon-level checks are in adversarial.test.ts). */
import { describe, expect, it } from "vitest";
import { redactSecrets, tokenForms } from "../server/dist/log/redact.js";
import { LINES_PER_WINDOW, LOG_WINDOW_MS, RepeatLimiter } from "../server/dist/log/repeat-limiter.js";

describe("redactSecrets", () => {
  const token = 'tok"en/with+chars';

  it("masks tokens by where they travel, including wrong guesses", () => {
    const line = JSON.stringify({ url: "/x?a=1&token=guess-1&%74oken=guess-2", header: "Bearer guess-3", protocol: "execmux.bearer.Z3Vlc3M" });
    const redacted = redactSecrets(line, []);
    for (const secret of ["guess-1", "guess-2", "guess-3", "Z3Vlc3M"]) expect(redacted).not.toContain(secret);
    expect(redacted).toContain("a=1");
  });

  it("masks a known token in every form it can take in a JSON line", () => {
    // As sent (in a message text, so JSON-escaped once), URL-encoded, and as the subprotocol's base64url.
    const forms = tokenForms(token);
    for (const form of [JSON.stringify(token).slice(1, -1), encodeURIComponent(token), Buffer.from(token).toString("base64url")]) {
      expect(forms).toContain(form);
      expect(redactSecrets(`{"msg":"something about ${form} here"}`, forms)).toBe('{"msg":"something about [redacted] here"}');
    }
  });
});

describe("RepeatLimiter", () => {
  it("writes each message a bounded number of times per window, then reports how many it left out", () => {
    let now = 0;
    const written: unknown[][] = [];
    const { logMethod } = new RepeatLimiter(() => now).hooks();
    const write = (...values: unknown[]) => void written.push(values);
    for (let index = 0; index < 1000; index++) logMethod.call(undefined, [{ index }, "same thing"], write, 30);
    logMethod.call(undefined, ["another thing"], write, 30);
    expect(written.filter((values) => values[1] === "same thing")).toHaveLength(LINES_PER_WINDOW);
    expect(written.at(-1)).toEqual(["another thing"]);

    now += LOG_WINDOW_MS;
    logMethod.call(undefined, ["same thing"], write, 30);
    expect(written.at(-2)).toEqual([{ suppressed: 1000 - LINES_PER_WINDOW, message: "same thing", windowMs: LOG_WINDOW_MS }, "repeated log lines were left out"]);
    expect(written.at(-1)).toEqual(["same thing"]);
  });

  it("keeps its table bounded however many distinct messages a client provokes", () => {
    const written: unknown[][] = [];
    const { logMethod } = new RepeatLimiter(() => 0).hooks();
    const write = (...values: unknown[]) => void written.push(values);
    for (let index = 0; index < 100_000; index++) logMethod.call(undefined, [`message ${index}`], write, 30);
    expect(written.length).toBeLessThan(1024 + LINES_PER_WINDOW + 1);
  });
});
