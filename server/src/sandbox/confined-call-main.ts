/**
 * The helper confined-call.ts starts inside a sandbox: reads one call from
 * stdin (a line, or all of it), makes it, and writes what happened to stdout
 * as one JSON line. A call that asks to be held stays alive after that
 * until its stdin ends, so what it opened stays open meanwhile.
 */
import { decodeValue, encodeValue, type CallReport, type CallRequest } from "./confined-call-wire.js";

/** The request: its first line, or all of stdin when it has no newline. stdin stays open (for a held call). */
function readRequest(): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const finish = () => {
      process.stdin.off("data", onData).off("end", finish);
      process.stdin.pause();
      resolve(Buffer.concat(chunks).toString("utf8").split("\n")[0]!);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      if (chunk.includes(10)) finish();
    };
    process.stdin.on("data", onData).once("end", finish).once("error", reject);
  });
}

let request: CallRequest | undefined;

async function main(): Promise<CallReport> {
  try {
    request = JSON.parse(await readRequest()) as CallRequest;
    const module = (await import(request.module)) as Record<string, unknown>;
    const fn = module[request.exportName];
    if (typeof fn !== "function") throw new Error(`${request.module} has no function ${request.exportName}`);
    const value: unknown = await (fn as (...args: unknown[]) => unknown)(...(decodeValue(request.args) as unknown[]));
    return { ok: true, value: encodeValue(value) };
  } catch (caught) {
    const error = caught as NodeJS.ErrnoException;
    // An RpcError's code is the protocol's number; an fs error's is errno's name.
    const code: unknown = error.code;
    if (typeof code === "number") return { ok: false, error: { message: error.message, rpcCode: code } };
    return {
      ok: false,
      error: {
        message: error.message ?? String(caught),
        ...(code === undefined ? {} : { code: String(code) }),
        ...(error.errno === undefined ? {} : { errno: error.errno }),
        ...(error.syscall === undefined ? {} : { syscall: error.syscall }),
        ...(error.path === undefined ? {} : { path: error.path }),
      },
    };
  }
}

const report = await main();
process.stdout.write(`${JSON.stringify(report)}\n`);
if (request?.hold) {
  // Held until the daemon is done with what the call opened: it ends stdin (or dies, which ends it too).
  process.stdin.resume();
  await new Promise((resolve) => process.stdin.once("end", resolve).once("close", resolve));
}
