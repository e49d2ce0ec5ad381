/**
 * linuxRootWritePreservesDevices, against the real upstream: a profile that
 * makes `/` writable still gets a fresh /dev with the standard devices only
 * (null, zero, random, urandom, tty, full, pts, ptmx, shm and the std
 * streams), never the host's, and what the profile restricts below `/` stays
 * restricted.
 */
import { describeDifferential, type DifferentialCase } from "./helpers/differential.js";
import { events, start } from "./helpers/exec-server-frames.js";

const rootWrite = (script: string, entries: unknown[] = []) =>
  start("p", script, {
    sandbox: {
      permissions: {
        type: "managed",
        file_system: {
          type: "restricted",
          entries: [{ path: { type: "special", value: { kind: "root" } }, access: "write" }, ...entries],
        },
        network: "restricted",
      },
      cwd: "file://<scratch>",
      windowsSandboxLevel: "disabled",
      useLegacyLandlock: false,
    },
  });

const cases: DifferentialCase[] = [
  {
    name: "/ writable, /etc read-only: the standard devices, and /etc stays read-only",
    steps: [
      rootWrite("ls /dev | tr '\\n' ' '; echo; echo ok > /dev/null && echo null-ok; touch /etc/execmux-root-write-probe 2>&1; echo \"exit $?\"", [
        { path: { type: "path", path: "file:///etc" }, access: "read" },
      ]),
      events("p"),
    ],
  },
  {
    name: "/ writable and nothing restricted below it",
    steps: [rootWrite("ls /dev | tr '\\n' ' '; echo; head -c 4 /dev/zero | od -An -tx1"), events("p")],
  },
];

describeDifferential("sandbox: root write preserves devices", cases);
