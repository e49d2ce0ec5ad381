/**
 * The environment variables the built-in credential sources own
 * (credential-broker.ts SOURCES), and the one naming GitHub Enterprise's
 * host: also what a custom provider may not claim (custom-providers.ts).
 */
export const GITHUB_CLOUD_KEYS = ["GH_TOKEN", "GITHUB_TOKEN"];
export const GITHUB_ENTERPRISE_KEYS = ["GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"];
export const OPENAI_KEYS = ["OPENAI_API_KEY"];
export const GITHUB_HOST_KEY = "GH_HOST";
