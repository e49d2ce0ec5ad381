/** Where `execmux exec` and `execmux mcp` run a command: the rule in commands/remote-cwd.ts, as a pure function. */
import { describe, expect, it } from "vitest";
import { remoteCwd } from "../server/dist/commands/remote-cwd.js";
import { unknownVariableWarnings } from "../server/dist/unknown-variables.js";

describe("the remote working directory", () => {
  it("is the caller's directory for a daemon on a loopback address", () => {
    for (const url of ["ws://127.0.0.1:7373", "ws://127.1.2.3:1", "ws://localhost:7373", "ws://[::1]:7373", "wss://localhost"]) {
      expect(remoteCwd(url, undefined, "/home/me/project"), url).toBe("/home/me/project");
      expect(remoteCwd(url, "src/../build", "/home/me/project"), url).toBe("/home/me/project/build");
    }
  });

  it("is / for a daemon elsewhere, and a relative --cwd is taken from there", () => {
    for (const url of ["ws://sandbox:7373", "wss://10.0.0.5:7373", "ws://[2001:db8::1]:7373"]) {
      expect(remoteCwd(url, undefined, "/home/me/project"), url).toBe("/");
      expect(remoteCwd(url, "srv/app", "/home/me/project"), url).toBe("/srv/app");
    }
  });

  it("passes absolute paths and file:// URIs through", () => {
    expect(remoteCwd("ws://127.0.0.1:7373", "/tmp", "/home/me")).toBe("/tmp");
    expect(remoteCwd("ws://sandbox:7373", "file:///srv/a%20b", "/home/me")).toBe("file:///srv/a%20b");
  });
});

describe("unknown EXECMUX_* variables", () => {
  it("are reported with the closest known name, and known ones and other prefixes are not", () => {
    expect(
      unknownVariableWarnings({ EXECMUX_TOKN: "x", EXECMUX_TOKEN: "y", EXECMUX_URL: "ws://h", EXECMUX_SESSION: "s", EXECMUX_CONFIG: "f", EXECMUX_DEBUG: "1", EXECMUX_RETAINED_BYTES: "1", PATH: "/bin", EXECMUXTOKEN: "z" }),
    ).toEqual(["unknown environment variable EXECMUX_TOKN is ignored (did you mean EXECMUX_TOKEN?)"]);
    expect(unknownVariableWarnings({ EXECMUX_SOMETHING_ELSE_ENTIRELY: "1" })).toEqual(["unknown environment variable EXECMUX_SOMETHING_ELSE_ENTIRELY is ignored"]);
  });
});
