/**
 * The machine a bench run ran on, for its header line and JSON. The CPU comes
 * from /proc/cpuinfo rather than os.cpus(): on a KVM guest the model name can
 * be as short as "AMD EPYC", and then only family, model and stepping tell one
 * EPYC generation from another.
 */
import { readFileSync } from "node:fs";
import os from "node:os";

export interface Machine {
  cpus: number;
  /** /proc/cpuinfo's `model name`, as it is. */
  cpuModel: string;
  /** The model name with what else /proc/cpuinfo says about the CPU: family, model, stepping, MHz, hypervisor. */
  cpu: string;
  memoryGiB: number;
  node: string;
  kernel: string;
}

function cpuinfoFields(): Map<string, string> {
  const fields = new Map<string, string>();
  try {
    // The first processor's block is enough: a machine's cores are alike.
    const first = readFileSync("/proc/cpuinfo", "utf8").split("\n\n")[0] ?? "";
    for (const line of first.split("\n")) {
      const colon = line.indexOf(":");
      if (colon > 0) fields.set(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    }
  } catch {
    // Not Linux: os.cpus() below is all there is.
  }
  return fields;
}

export function describeMachine(): Machine {
  const info = cpuinfoFields();
  const cpuModel = info.get("model name") ?? os.cpus()[0]?.model ?? "unknown";
  const details = [
    info.has("cpu family") ? `family ${info.get("cpu family")}` : undefined,
    info.has("model") ? `model ${info.get("model")}` : undefined,
    info.has("stepping") ? `stepping ${info.get("stepping")}` : undefined,
    info.has("cpu MHz") ? `${Math.round(Number(info.get("cpu MHz")))} MHz` : undefined,
    info.get("flags")?.split(" ").includes("hypervisor") ? "virtualized" : undefined,
  ].filter((detail) => detail !== undefined);
  return {
    cpus: os.cpus().length,
    cpuModel,
    cpu: details.length > 0 ? `${cpuModel} (${details.join(", ")})` : cpuModel,
    memoryGiB: Math.round(os.totalmem() / 1024 ** 3),
    node: process.version,
    kernel: os.release(),
  };
}
