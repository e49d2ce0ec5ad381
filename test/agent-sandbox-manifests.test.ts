/**
 * deploy/agent-sandbox/: each manifest checked with ajv against the schema
 * written from agent-sandbox's CRDs (helpers/agent-sandbox-schema.ts), so a
 * misspelled or misplaced field fails here instead of being pruned by the
 * API server; the pieces agree with each other; and the daemon's container,
 * as the template runs it (its init container, its environment), is a real
 * daemon that takes a token minted for its sandbox and refuses another's.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv } from "ajv";
import { parseAllDocuments } from "yaml";
import { describe, expect, it } from "vitest";
import { connect } from "@execmux/client";
import { loadConfig } from "@execmux/server";
import { knownVariables } from "../server/dist/unknown-variables.js";
import { MANIFEST_SCHEMAS } from "./helpers/agent-sandbox-schema.js";
import { runCli, spawnDaemon } from "./helpers/cli.js";
import { scratchDirectory } from "./helpers/scratch.js";

const DIRECTORY = new URL("../deploy/agent-sandbox/", import.meta.url);

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string } };
}
interface Probe {
  httpGet: { path: string; port: number };
}
interface Container {
  name: string;
  command: string[];
  env: EnvVar[];
  ports?: { containerPort: number }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  volumeMounts: { name: string; mountPath: string }[];
}
interface PodTemplate {
  spec: { initContainers: Container[]; containers: Container[]; volumes: { name: string; secret?: { secretName: string } }[] };
}
interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec: Record<string, unknown>;
}

const manifests: { file: string; manifest: Manifest }[] = readdirSync(DIRECTORY)
  .filter((name) => name.endsWith(".yaml"))
  .sort()
  .flatMap((file) =>
    parseAllDocuments(readFileSync(new URL(file, DIRECTORY), "utf8")).map((document) => {
      expect(document.errors, file).toEqual([]);
      return { file, manifest: document.toJSON() as Manifest };
    }),
  );
const one = (kind: string) => {
  const found = manifests.filter(({ manifest }) => manifest.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0]!.manifest;
};
const podOf = (manifest: Manifest) => manifest.spec.podTemplate as PodTemplate;

const ajv = new Ajv({ allErrors: true, strict: true, validateFormats: false });
const validators = new Map(Object.entries(MANIFEST_SCHEMAS).map(([key, schema]) => [key, ajv.compile(schema)]));

/** The ajv errors of `manifest` against its kind's schema (a kind without one is an error too). */
function errorsOf(manifest: Manifest): string[] {
  const validate = validators.get(`${manifest.apiVersion}/${manifest.kind}`);
  if (!validate) return [`no schema for ${manifest.apiVersion} ${manifest.kind}`];
  return validate(manifest) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message} ${JSON.stringify(error.params)}`);
}

const copy = <T>(value: T): T => structuredClone(value);

/** A container's environment as the kubelet would give it to a pod named `pod` in `namespace`. */
function resolvedEnv(container: Container, pod: string, namespace: string): Record<string, string> {
  const fields: Record<string, string> = { "metadata.name": pod, "metadata.namespace": namespace };
  return Object.fromEntries(
    container.env.map((variable) => {
      const fieldPath = variable.valueFrom?.fieldRef?.fieldPath;
      const value = variable.value ?? (fieldPath ? fields[fieldPath] : undefined);
      expect(value, variable.name).toBeDefined();
      return [variable.name, value!];
    }),
  );
}

/** `$(NAME)` in a command expanded from the container's environment, as Kubernetes does. */
const expand = (argument: string, env: Record<string, string>) => argument.replace(/\$\(([A-Z_][A-Z0-9_]*)\)/g, (whole, name: string) => env[name] ?? whole);

describe("the agent-sandbox manifests", () => {
  it("are the kinds a fleet needs, each valid against the schema from the CRDs' fields", () => {
    expect(manifests.map(({ manifest }) => manifest.kind).sort()).toEqual(["NetworkPolicy", "Sandbox", "SandboxClaim", "SandboxTemplate", "SandboxWarmPool"]);
    for (const { file, manifest } of manifests) expect(errorsOf(manifest), `${file}: ${manifest.kind}`).toEqual([]);
  });

  it("refuse a misspelled field, a field in the wrong place, a wrong value, and a kind of another version", () => {
    const template = one("SandboxTemplate");
    const misspelled = copy(template);
    const container = podOf(misspelled).spec.containers[0] as unknown as Record<string, unknown>;
    container.readinesProbe = container.readinessProbe;
    delete container.readinessProbe;
    expect(errorsOf(misspelled).join()).toContain('"additionalProperty":"readinesProbe"');

    // networkPolicy is a SandboxTemplate's; a Sandbox has none.
    const sandbox = copy(one("Sandbox"));
    sandbox.spec.networkPolicy = template.spec.networkPolicy;
    expect(errorsOf(sandbox).join()).toContain('"additionalProperty":"networkPolicy"');

    // A probe's port sits in httpGet, not beside it.
    const misplaced = copy(template);
    const probe = podOf(misplaced).spec.containers[0]!.readinessProbe as unknown as Record<string, unknown>;
    probe.port = 8888;
    expect(errorsOf(misplaced).join()).toContain('"additionalProperty":"port"');

    const badEnum = copy(template);
    badEnum.spec.envVarsInjectionPolicy = "Forbidden";
    expect(errorsOf(badEnum).join()).toContain("allowedValues");

    // v1alpha1's claim named its template; v1beta1's names a warm pool.
    const alphaClaim = copy(one("SandboxClaim"));
    alphaClaim.spec = { sandboxTemplateRef: { name: "execmux" } };
    expect(errorsOf(alphaClaim).join()).toContain("warmPoolRef");

    const alphaSandbox = copy(one("Sandbox"));
    alphaSandbox.apiVersion = "agents.x-k8s.io/v1alpha1";
    expect(errorsOf(alphaSandbox)).toEqual(["no schema for agents.x-k8s.io/v1alpha1 Sandbox"]);
  });

  it("name each other: the claim its warm pool, the pool its template; no claim sets env", () => {
    const template = one("SandboxTemplate");
    const pool = one("SandboxWarmPool");
    const claim = one("SandboxClaim");
    expect((claim.spec.warmPoolRef as { name: string }).name).toBe(pool.metadata.name);
    expect((pool.spec.sandboxTemplateRef as { name: string }).name).toBe(template.metadata.name);
    expect(claim.spec.env).toBeUndefined();
    expect(template.spec.envVarsInjectionPolicy).toBe("Disallowed");
  });

  it("run the same pod from the template and as a plain Sandbox, with its own NetworkPolicy", () => {
    const template = one("SandboxTemplate");
    const sandbox = one("Sandbox");
    expect(podOf(sandbox)).toEqual(podOf(template));
    const policy = one("NetworkPolicy").spec as { podSelector: { matchLabels: Record<string, string> }; ingress: unknown; egress: unknown };
    expect(podOf(template) as unknown as { metadata: { labels: Record<string, string> } }).toMatchObject({ metadata: { labels: policy.podSelector.matchLabels } });
    const templatePolicy = template.spec.networkPolicy as { ingress: unknown; egress: unknown };
    expect(policy.ingress).toEqual(templatePolicy.ingress);
    expect(policy.egress).toEqual(templatePolicy.egress);
  });

  it("listen, probe and admit the router on one port, the one the daemon's configuration names", () => {
    const template = one("SandboxTemplate");
    const daemon = podOf(template).spec.containers.find((container) => container.name === "execmux")!;
    const env = resolvedEnv(daemon, "box-1", "agents");
    for (const name of Object.keys(env)) expect(knownVariables(), name).toContain(name);
    // The daemon accepts its environment as the pod gives it.
    const config = loadConfig([], env);
    const port = Number(new URL(config.listen).port);
    expect(port).toBe(8888);
    expect(config.wsAuth).toBe("signed-bearer-token");
    expect(config.wsAudience).toBe("box-1");
    expect(daemon.ports?.map((entry) => entry.containerPort)).toEqual([port]);
    expect(daemon.readinessProbe?.httpGet).toEqual({ path: "/readyz", port });
    expect(daemon.livenessProbe?.httpGet).toEqual({ path: "/livez", port });
    expect(daemon.startupProbe?.httpGet).toEqual({ path: "/livez", port });
    const ingress = (template.spec.networkPolicy as { ingress: { ports: { port: number }[] }[] }).ingress;
    expect(ingress.flatMap((rule) => rule.ports.map((entry) => entry.port))).toEqual([port]);
  });

  it("give the daemon its sandbox's own key: it takes a token minted for it and refuses another sandbox's", async () => {
    const pod = podOf(one("SandboxTemplate")).spec;
    const [init] = pod.initContainers;
    const daemon = pod.containers.find((container) => container.name === "execmux")!;
    // The fleet secret is mounted in the init container only.
    const secretVolume = pod.volumes.find((volume) => volume.secret)!;
    expect(init!.volumeMounts.map((mount) => mount.name)).toContain(secretVolume.name);
    expect(daemon.volumeMounts.map((mount) => mount.name)).not.toContain(secretVolume.name);

    // Run the init container's command and the daemon with the pod's environment, the mounts as scratch directories.
    const scratch = scratchDirectory("agent-sandbox-pod");
    const mounts = new Map(
      [...init!.volumeMounts, ...daemon.volumeMounts].map((mount) => [mount.mountPath, join(scratch, mount.name)] as const),
    );
    const local = (path: string) => {
      for (const [mountPath, directory] of mounts) if (path.startsWith(`${mountPath}/`)) return join(directory, path.slice(mountPath.length + 1));
      return path;
    };
    for (const directory of new Set(mounts.values())) mkdirSync(directory, { recursive: true });
    const fleetSecret = join(scratch, "fleet.secret");
    writeFileSync(fleetSecret, "4f1c0a9e6b2d8e7f3a5c1b9d0e2f4a6c8b0d2e4f6a8c0b2d4e6f8a0c2e4b6d8f\n");
    writeFileSync(local(`${init!.volumeMounts.find((mount) => mount.name === secretVolume.name)!.mountPath}/secret`), readFileSync(fleetSecret));

    const initEnv = resolvedEnv(init!, "box-1", "agents");
    const [program, ...initArgs] = init!.command.map((argument) => local(expand(argument, initEnv)));
    expect(program).toBe("execmux");
    const derived = await runCli(initArgs);
    expect(derived.stderr).toBe("");
    expect(derived.code).toBe(0);

    const env = resolvedEnv(daemon, "box-1", "agents");
    env.EXECMUX_WS_SHARED_SECRET_FILE = local(env.EXECMUX_WS_SHARED_SECRET_FILE!);
    env.EXECMUX_LISTEN = "ws://127.0.0.1:0";
    const running = await spawnDaemon(["--log-level", "warn"], env);

    const mint = async (sandbox: string, namespace: string) => {
      const minted = await runCli(["token", "mint", "--secret-file", fleetSecret, "--sandbox", sandbox, "--namespace", namespace, "--subject", "alice", "--ttl", "5m"]);
      expect(minted.code, minted.stderr).toBe(0);
      return minted.stdout.trim();
    };
    const client = await connect(running.url, { token: await mint("box-1", "agents"), reconnect: false });
    const echo = await client.start({ argv: ["echo", "in box-1"] });
    expect(await echo.wait()).toBe(0);
    client.close();
    for (const [sandbox, namespace] of [["box-2", "agents"], ["box-1", "default"]] as const) {
      await expect(connect(running.url, { token: await mint(sandbox, namespace), reconnect: false })).rejects.toThrow(/refused the token \(HTTP 401\)/);
    }
    running.child.kill("SIGTERM");
    expect((await running.exited).code).toBe(0);
  });
});
