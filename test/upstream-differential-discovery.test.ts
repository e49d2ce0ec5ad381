/**
 * Differential conformance (test/helpers/differential.ts) for capability
 * discovery: `capabilityRoots/discoverV1` with and without a sandbox
 * (capability capabilityDiscoverySandbox), against the real upstream 0.171.
 *   npx vitest run test/upstream-differential-discovery.test.ts -t "discoverV1"
 */
import { describeDifferential, type Step } from "./helpers/differential.js";
import type { ScratchFiles } from "./helpers/differential-files.js";
import { readsDisk } from "./helpers/exec-server-frames.js";

const discover = (...roots: Record<string, unknown>[]): Step => ({ request: "capabilityRoots/discoverV1", params: { roots } });
const root = (id: string, path: string, extra: Record<string, unknown> = {}) => ({ id, path: path === "" ? "file://<scratch>" : `file://<scratch>/${path}`, ...extra });

const SKILL = (name: string) => `---\nname: ${name}\ndescription: The ${name} skill.\n---\n\nDo ${name}.\n`;

/** upstream's own test bundle (exec-server/tests), and then some. */
const BUNDLE: ScratchFiles = {
  ".codex-plugin/plugin.json": '{\n  "name": "demo",\n  "interface": {"displayName": "Demo Plugin"},\n  "mcpServers": "./config/mcp.json",\n  "apps": "./config/apps.json"\n}',
  ".claude-plugin/plugin.json": '{"name":"lower-priority-claude"}',
  ".cursor-plugin/plugin.json": '{"name":"lower-priority-cursor"}',
  "config/mcp.json": '{"mcpServers":{"demo":{"command":"demo-server"}}}',
  "config/apps.json": '{"apps":{"demo":{"connector_id":"connector-demo"}}}',
  "skills/deploy/SKILL.md": SKILL("deploy"),
  "skills/deploy/agents/openai.yaml": "policy:\n  allow_implicit_invocation: false\n",
  "nested/.claude-plugin/plugin.json": '{"name":"nested"}',
  "nested/skills/audit/SKILL.md": SKILL("audit"),
  "nested-cursor/.cursor-plugin/plugin.json": '{"name":"cursor-nested"}',
  "nested-cursor/skills/review/SKILL.md": SKILL("review"),
  ".hidden/skills/secretive/SKILL.md": SKILL("secretive"),
  "notes/README.md": "not a skill",
};

describeDifferential("capabilityRoots/discoverV1", [
  { name: "a complete bundle: manifests by precedence, configs, skills with their metadata, nested plugins", files: BUNDLE, steps: [discover(root("demo@1", ""))] },
  {
    name: "a root inside a plugin takes the nearest manifest above it",
    files: BUNDLE,
    steps: [discover(root("skills", "skills"), root("nested-skills", "nested/skills"), root("deeper", "nested/skills/audit"))],
  },
  {
    name: "inline mcpServers: no MCP file is read",
    files: { ".cursor-plugin/plugin.json": '{"name":"cursor-demo","mcpServers":{"inline":{"command":"inline"}}}', ".mcp.json": '{"mcpServers":{}}' },
    steps: [discover(root("cursor@1", ""))],
  },
  {
    name: "no declaration, or one that is not a path: the default .mcp.json",
    files: {
      "a/.codex-plugin/plugin.json": '{"name":"a"}',
      "a/.mcp.json": '{"mcpServers":{"a":{}}}',
      "b/.codex-plugin/plugin.json": '{"name":"b","mcpServers":null,"apps":7}',
      "b/.mcp.json": "{}",
      "c/.codex-plugin/plugin.json": "this is not JSON",
      "c/.mcp.json": "{}",
      "d/.codex-plugin/plugin.json": '{"mcpServers":["./x.json"]}',
    },
    steps: [discover(root("a", "a"), root("b", "b"), root("c", "c"), root("d", "d"))],
  },
  {
    name: "declared paths that leave the root, or are not ./relative, are ignored with a warning",
    files: {
      "p/.codex-plugin/plugin.json": '{"mcpServers":"config/mcp.json","apps":"./../apps.json"}',
      "q/.codex-plugin/plugin.json": '{"mcpServers":"./","apps":"/etc/passwd"}',
      "r/.codex-plugin/plugin.json": '{"mcpServers":"./a/../../x.json","apps":"./a\\\\..\\\\b.json"}',
      "s/.codex-plugin/plugin.json": '{"mcpServers":"./missing.json","apps":"./sub/apps.json"}',
      "s/sub/apps.json": '{"apps":{}}',
      "apps.json": "{}",
    },
    steps: [discover(root("p", "p"), root("q", "q"), root("r", "r"), root("s", "s"))],
  },
  {
    name: "roots that are missing, a file, under a file, or on another host",
    files: { "file.txt": "x" },
    steps: [discover(root("missing", "nope"), root("file", "file.txt"), root("under-file", "file.txt/x"), { id: "windows", path: "file:///C:/x" })],
  },
  {
    name: "roots are answered in order, ids as given (repeated ones too)",
    files: BUNDLE,
    steps: [discover(root("a", "nested"), root("a", "skills"), root("", "nested-cursor"))],
  },
  {
    name: "no roots",
    steps: [discover()],
  },
  {
    name: "symlinks: directories followed (each once), files read through, dangling and looping ones skipped",
    files: {
      "real/skills/linked/SKILL.md": SKILL("linked"),
      "root/via": { symlink: "<scratch>/real" },
      "root/again": { symlink: "<scratch>/real" },
      "root/skills/file-link/SKILL.md": { symlink: "<scratch>/real/skills/linked/SKILL.md" },
      "root/skills/dangling/SKILL.md": { symlink: "<scratch>/nowhere" },
      "root/loop": { symlink: "<scratch>/root/loop" },
      "root/.codex-plugin/plugin.json": { symlink: "<scratch>/manifest.json" },
      "manifest.json": '{"name":"linked-manifest"}',
    },
    steps: [discover(root("root", "root"))],
  },
  {
    name: "a SKILL.md that is a directory, a FIFO manifest, a manifest directory",
    files: {
      "skills/odd/SKILL.md/inner.txt": "x",
      ".codex-plugin/plugin.json": { fifo: true },
      ".claude-plugin/plugin.json/x": "x",
      ".cursor-plugin/plugin.json": '{"name":"third"}',
    },
    steps: [discover(root("odd", ""))],
  },
  {
    name: "files that are not UTF-8 are left out with Rust's words",
    files: {
      "skills/a/SKILL.md": { bytes: [0x2d, 0x2d, 0xff, 0x41] },
      "skills/b/SKILL.md": { bytes: [0x41, 0xe2, 0x82] },
      "skills/c/SKILL.md": { bytes: [0x41, 0xf0, 0x9f, 0x98, 0x41] },
      "skills/d/SKILL.md": { bytes: [0xed, 0xa0, 0x80] },
      "skills/e/SKILL.md": "fine: \u00e9\u4e2d\ud83d\ude00",
    },
    steps: [discover(root("utf8", ""))],
  },
  {
    name: "a file over 1 MiB is left out with a warning",
    files: { "skills/big/SKILL.md": { sparseBytes: 1024 * 1024 + 1 }, "skills/small/SKILL.md": SKILL("small") },
    steps: [discover(root("big", ""))],
  },
  {
    name: "deeper than six directories is not scanned",
    files: { "1/2/3/4/5/6/SKILL.md": SKILL("six"), "1/2/3/4/5/6/7/SKILL.md": SKILL("seven"), "1/2/3/4/5/6/7/8/SKILL.md": SKILL("eight") },
    steps: [discover(root("deep", ""))],
  },
  {
    name: "paths that need encoding",
    files: { "with space/skills/ünï cödé/SKILL.md": SKILL("encoded"), "with space/.codex-plugin/plugin.json": '{"name":"spaced"}' },
    steps: [discover({ id: "encoded", path: "file://<scratch>/with%20space" })],
  },
  {
    name: "a root URI with a trailing slash or a dot segment",
    files: BUNDLE,
    steps: [discover({ id: "slash", path: "file://<scratch>/nested/" }, { id: "dot", path: "file://<scratch>/./nested-cursor" })],
  },
  {
    name: "params upstream refuses",
    steps: [
      { request: "capabilityRoots/discoverV1", params: null },
      { request: "capabilityRoots/discoverV1" },
      { request: "capabilityRoots/discoverV1", params: {} },
      { request: "capabilityRoots/discoverV1", params: { roots: null } },
      { request: "capabilityRoots/discoverV1", params: { roots: {} } },
      discover({ id: 1, path: "file://<scratch>" }),
      discover({ id: "a" }),
      discover({ path: "file://<scratch>" }),
      discover({ id: "a", path: "relative" }),
      discover({ id: "a", path: "http://example.com/x" }),
      discover({ id: "a", path: "file:///tmp/a%00b" }),
      discover({ id: "a", path: "file://<scratch>", sandbox: "none" }),
      discover(...Array.from({ length: 129 }, (_, index) => root(`r${index}`, "missing"))),
      discover(root("ok", ""), { id: "bad", path: "relative" }),
    ],
  },
  {
    name: "before initialize",
    handshake: false,
    steps: [discover(root("a", ""))],
  },
]);

/**
 * A profile that reads all but one directory: not whole-disk read, so both
 * servers discover inside a sandbox, and what it denies is the kernel's
 * EACCES in the same words.
 */
const readAllButSecret = {
  permissions: readsDisk({ path: { type: "path", path: "file://<scratch>/secret" }, access: "deny" }),
  policyContext: { cwd: "file://<scratch>", workspaceRoots: ["file://<scratch>"] },
  windowsSandboxLevel: "disabled",
  useLegacyLandlock: false,
};
/** The whole disk readable: discovery runs as without a sandbox. */
const readAll = {
  ...readAllButSecret,
  permissions: readsDisk(),
};
const SECRET_TREE: ScratchFiles = {
  "skills/open/SKILL.md": SKILL("open"),
  "secret/skills/hidden/SKILL.md": SKILL("hidden"),
  "secret/.codex-plugin/plugin.json": '{"name":"secret-plugin"}',
  "plugin/.codex-plugin/plugin.json": '{"name":"open-plugin","mcpServers":"./mcp.json"}',
  "plugin/mcp.json": "{}",
  "plugin/skills/s/SKILL.md": SKILL("s"),
  "plugin/secret-link": { symlink: "<scratch>/secret" },
};

describeDifferential("capabilityRoots/discoverV1 under a sandbox", [
  { name: "a denied directory inside the root is not scanned", files: SECRET_TREE, steps: [discover(root("all", "", { sandbox: readAllButSecret }))] },
  { name: "a denied root", files: SECRET_TREE, steps: [discover(root("secret", "secret", { sandbox: readAllButSecret }), root("inside", "secret/skills", { sandbox: readAllButSecret }))] },
  { name: "a symlink into the denied directory", files: SECRET_TREE, steps: [discover(root("plugin", "plugin", { sandbox: readAllButSecret }))] },
  {
    name: "roots under different profiles in one request",
    files: SECRET_TREE,
    steps: [discover(root("confined", "", { sandbox: readAllButSecret }), root("whole-disk", "", { sandbox: readAll }), root("unconfined", "", { sandbox: null }), root("plain", ""))],
  },
  { name: "a missing root under a sandbox", files: SECRET_TREE, steps: [discover(root("missing", "nope", { sandbox: readAllButSecret }))] },
  {
    name: "a profile with project roots needs a cwd",
    files: SECRET_TREE,
    steps: [
      discover(
        root("a", "", {
          sandbox: {
            permissions: readsDisk({ path: { type: "special", value: { kind: "project_roots" } }, access: "write" }),
            windowsSandboxLevel: "disabled",
          },
        }),
      ),
    ],
  },
]);
