/**
 * Upstream's guess whether a sandboxed command failed because the sandbox
 * stopped it (codex-sandboxing `is_likely_sandbox_denied`), which Codex uses
 * to offer a retry with approval. A guess, exactly as upstream makes it: a
 * non-zero exit and a denial phrase anywhere in the output, or, short of
 * one, a death by SIGSYS (a seccomp kill), unless the exit code says
 * "misuse", "not executable" or "not found".
 */
const DENIAL_PHRASES = [
  "operation not permitted",
  "permission denied",
  "read-only file system",
  "seccomp",
  "sandbox",
  "landlock",
  "failed to write file",
];
const NOT_A_DENIAL_EXIT_CODES = new Set([2, 126, 127]);
const SIGSYS_EXIT_CODE = 128 + 31;

/** `output`: the process's retained output as text (read only for a non-zero exit). */
export function isLikelySandboxDenied(exitCode: number, output: () => string): boolean {
  if (exitCode === 0) return false;
  const text = output().toLowerCase();
  if (DENIAL_PHRASES.some((phrase) => text.includes(phrase))) return true;
  if (NOT_A_DENIAL_EXIT_CODES.has(exitCode)) return false;
  return exitCode === SIGSYS_EXIT_CODE;
}
