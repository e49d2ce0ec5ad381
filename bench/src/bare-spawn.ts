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
import { ratePerSecond } from "./stats.js";

const one = () =>
  new Promise<void>((resolve, reject) => {
    const child = spawn("/usr/bin/true", [], { stdio: "ignore" });
    child.once("error", reject);
    child.once("exit", () => resolve());
  });
console.log(await ratePerSecond(Number(process.argv[2]), Number(process.argv[3]), one));
