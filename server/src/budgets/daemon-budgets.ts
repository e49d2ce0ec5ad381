/**
 * The daemon-wide budgets a client's requests draw on, each per client
 * (its identity, auth/identity.ts) and for the whole daemon: descriptors
 * (descriptor-budget.ts) and bytes of buffered http/request bodies
 * (client-byte-budget.ts). Their defaults follow the process's descriptor
 * limit and the daemon's memory (memory-limit.ts), found on first use.
 */
import type { Config } from "../config.js";
import { ClientByteBudget } from "./client-byte-budget.js";
import { DescriptorBudget, descriptorLimits } from "./descriptor-budget.js";
import { shareOfMemory } from "./memory-limit.js";

const MiB = 1024 * 1024;

export interface DaemonBudgets {
  readonly descriptors: DescriptorBudget;
  readonly httpBodies: ClientByteBudget;
}

type BudgetSettings = Pick<Config, "maxDescriptors" | "maxDescriptorsPerClient" | "maxHttpBodyBytesTotal" | "maxHttpBodyBytesPerClient" | "maxHttpBodyBytes">;

export function daemonBudgets(config: BudgetSettings): DaemonBudgets {
  return {
    descriptors: new DescriptorBudget(() => descriptorLimits(config)),
    httpBodies: new ClientByteBudget(() => {
      const total = shareOfMemory(config.maxHttpBodyBytesTotal, 1 / 16, 32 * MiB, 512 * MiB);
      const perClient = config.maxHttpBodyBytesPerClient > 0 ? config.maxHttpBodyBytesPerClient : Math.max(config.maxHttpBodyBytes, Math.floor(total / 2));
      return { total, perClient: Math.min(perClient, total) };
    }),
  };
}
