import type { ParamsOf, ResultOf } from "@execmux/shared";
import { RpcError } from "../../rpc/rpc-error.js";
import type { SessionContext } from "../context.js";

export async function discoverCapabilities(_params: ParamsOf<"capabilities/discoverV2">, _context: SessionContext): Promise<ResultOf<"capabilities/discoverV2">> {
  throw new RpcError(-32601, "not yet");
}
