/**
 * The helper confined-call.ts starts inside a sandbox: reads one call from
 * stdin, makes it, and writes what happened to stdout as one JSON document.
 */
import { decodeValue, encodeValue, type CallReport, type CallRequest } from "./confined-call-wire.js";

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

async function main(): Promise<CallReport> {
  try {
    const request = JSON.parse(await readStdin()) as CallRequest;
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

process.stdout.write(JSON.stringify(await main()));
