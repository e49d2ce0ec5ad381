// Cold start & rest: spawn a server, wait for its URL, connect, initialize, start `true`, wait closed; then RSS of its tree after 3 s.
import { spawn, execFileSync } from "node:child_process";
import { readFileSync, readdirSync, mkdtempSync } from "node:fs";
import WebSocket from "/work/main/node_modules/ws/wrapper.mjs";
const [kind] = process.argv.slice(2);
const home = mkdtempSync("/tmp/cs-home-");
const cmd = kind === "upstream"
  ? ["/work/main/.cache/upstream-codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex", ["exec-server", "--listen", "ws://127.0.0.1:0"]]
  : ["node", [...(process.env.NODEFLAGS ? process.env.NODEFLAGS.split(" ") : []), process.env.CLI || "/work/main/server/dist/cli.js", "serve", "--listen", process.env.LISTEN || "ws://127.0.0.1:0", "--state-directory", home + "/state", "--log-level", "warn"]];
const t0 = performance.now();
const child = spawn(cmd[0], cmd[1], { env: { ...process.env, HOME: home }, stdio: ["ignore", "pipe", "pipe"] });
const url = await new Promise((resolve) => { let buf = ""; child.stdout.on("data", (d) => { buf += d; const m = /wss?:\/\/[^\s]+/.exec(buf); if (m) resolve(m[0]); }); });
const tUrl = performance.now();
const ws = new WebSocket(url); await new Promise((r) => ws.once("open", r));
const waiters = new Map(); let closedResolve; const closed = new Promise((r) => (closedResolve = r));
ws.on("message", (d) => { const m = JSON.parse(d.toString()); if (process.env.DEBUGMSG) console.error(JSON.stringify(m).slice(0,200)); if (m.id && waiters.has(m.id)) waiters.get(m.id)(m); if (m.method === "process/closed") closedResolve(); });
const req = (id, method, params) => new Promise((r) => { waiters.set(id, r); ws.send(JSON.stringify({ id, method, params })); });
await req(1, "initialize", { clientName: "cold" }); const tInit = performance.now();
ws.send(JSON.stringify({ method: "initialized", params: {} }));
await req(2, "process/start", { processId: "p", argv: ["/bin/true"], cwd: "file:///tmp", env: {}, tty: false, pipeStdin: false, arg0: null });
await closed; const tClosed = performance.now();
ws.close();
await new Promise((r) => setTimeout(r, 3000));
function tree(pid) { const out = [pid]; for (const t of readdirSync(`/proc/${pid}/task`)) { for (const c of readFileSync(`/proc/${pid}/task/${t}/children`, "utf8").trim().split(" ").filter(Boolean)) out.push(...tree(Number(c))); } return out; }
// Everything started from this child, including a detached host (found by its parent chain or its session).
const pids = new Set(tree(child.pid));
for (const p of readdirSync("/proc").filter((x) => /^\d+$/.test(x))) { try { const cmdline = readFileSync(`/proc/${p}/cmdline`, "latin1"); if (cmdline.includes(home)) pids.add(Number(p)); } catch {} }
let rss = 0, pss = 0; const names = [];
for (const p of pids) { try { const r = readFileSync(`/proc/${p}/smaps_rollup`, "utf8"); rss += Number(/Rss:\s+(\d+)/.exec(r)[1]); pss += Number(/Pss:\s+(\d+)/.exec(r)[1]); names.push(readFileSync(`/proc/${p}/comm`, "utf8").trim()); } catch {} }
console.log(JSON.stringify({ kind, url: Math.round(tUrl - t0), init: Math.round(tInit - t0), closed: Math.round(tClosed - t0), processes: names.length, names, rssMiB: +(rss / 1024).toFixed(1), pssMiB: +(pss / 1024).toFixed(1) }));
child.kill("SIGTERM");
await new Promise((r) => setTimeout(r, 1500));
for (const p of pids) { try { process.kill(p, "SIGKILL"); } catch {} }
process.exit(0);
