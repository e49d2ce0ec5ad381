/**
 * The spawn baseline: a small Node process that does nothing but
 * `child_process.spawn` `/usr/bin/true` and wait for its exit, `total`
 * times with `inFlight` at once, and prints the rate (per second). What a
 * spawn costs depends on the machine far more than on execmux (fork, exec
 * and page faults: on a paravirtualized VM several times what they cost on
 * another), so the bench compares execmux with this rather than with a
 * fixed number. A process of its own, as small as execmux's spawner
 * process: the bench's own heap would slow its forks.
 * Arguments: total, inFlight.
 */
import { spawn } from "node:child_process";

const total = Number(process.argv[2]);
const inFlight = Number(process.argv[3]);
let next = 0;
const one = () =>
  new Promise<void>((resolve, reject) => {
    const child = spawn("/usr/bin/true", [], { stdio: "ignore" });
    child.once("error", reject);
    child.once("exit", () => resolve());
  });
const worker = async () => {
  while (next < total) {
    next++;
    await one();
  }
};
const started = performance.now();
await Promise.all(Array.from({ length: inFlight }, worker));
console.log(total / ((performance.now() - started) / 1000));
