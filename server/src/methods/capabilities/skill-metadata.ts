/**
 * A skill's record for capabilities/discoverV2, from its files as upstream
 * 0.171 reads them: the SKILL.md front matter (`name`, `description`,
 * `metadata.short-description`) and the `agents/openai.yaml` beside it
 * (`policy`, `dependencies.tools`). A SKILL.md without front matter, or
 * without a description in it, is no skill (the caller warns); one without
 * a name is named after its directory.
 */
import type { DiscoveredSkillFiles, ExecutorSkill, SkillDependencies, SkillPolicy } from "@execmux/shared";
import { parse } from "yaml";

/** The front matter: a first line `---`, then YAML up to the next `---` line. */
const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

type Mapping = Record<string, unknown>;

const isMapping = (value: unknown): value is Mapping => value !== null && typeof value === "object" && !Array.isArray(value);
const text = (value: unknown): string | null => (typeof value === "string" ? value : null);

/** `failsafe`: every scalar a string, as upstream reads the front matter (`short-description: 5` is "5"). */
function yamlMapping(source: string, schema: "core" | "failsafe" = "core"): Mapping | undefined {
  try {
    const parsed: unknown = parse(source, { maxAliasCount: 100, schema });
    return isMapping(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

export function parseSkillFiles(files: DiscoveredSkillFiles): ExecutorSkill | undefined {
  const frontMatter = FRONT_MATTER.exec(files.instructions.contents)?.[1];
  if (frontMatter === undefined) return undefined;
  const fields = yamlMapping(frontMatter, "failsafe");
  const description = text(fields?.["description"]);
  if (!fields || description === null) return undefined;
  // Without a name in the front matter, the skill is named after its directory.
  const name = text(fields["name"]) ?? directoryNameOf(files.instructions.path);
  const metadata = files.metadata ? yamlMapping(files.metadata.contents) : undefined;
  return {
    name,
    description,
    shortDescription: isMapping(fields["metadata"]) ? text(fields["metadata"]["short-description"]) : null,
    path: files.instructions.path,
    dependencies: dependenciesOf(metadata?.["dependencies"]),
    policy: policyOf(metadata?.["policy"]),
  };
}

/** The name of the directory a file URI's file is in (its segments are percent-encoded). */
function directoryNameOf(uri: string): string {
  const segments = new URL(uri).pathname.split("/");
  return decodeURIComponent(segments.at(-2) ?? "");
}

/** `policy`: null unless a mapping whose `products`, if given, is a list of strings (as upstream 0.171 answered). */
function policyOf(policy: unknown): SkillPolicy | null {
  if (!isMapping(policy)) return null;
  const allow = policy["allow_implicit_invocation"];
  const products = policy["products"] ?? [];
  if (!Array.isArray(products) || !products.every((product) => typeof product === "string")) return null;
  return { allowImplicitInvocation: typeof allow === "boolean" ? allow : null, products };
}

/** `dependencies`: its tools that name a `type` and a `value`; null when none do. */
function dependenciesOf(dependencies: unknown): SkillDependencies | null {
  if (!isMapping(dependencies) || !Array.isArray(dependencies["tools"])) return null;
  const tools = dependencies["tools"].filter(isMapping).flatMap((tool) => {
    const [type, value] = [text(tool["type"]), text(tool["value"])];
    if (type === null || value === null) return [];
    const port = tool["oauth_callback_port"];
    return [
      {
        type,
        value,
        description: text(tool["description"]),
        transport: text(tool["transport"]),
        command: text(tool["command"]),
        url: text(tool["url"]),
        oauthCallbackPort: Number.isInteger(port) ? (port as number) : null,
      },
    ];
  });
  return tools.length > 0 ? { tools } : null;
}
