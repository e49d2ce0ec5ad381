/**
 * `execmux mcp --url ws://...`: a Model Context Protocol server on stdio
 * whose tools, `exec_command` and `write_stdin`, run on a remote execmux
 * daemon. Any MCP-capable agent gets a remote sandbox with no code. stdout
 * is the MCP channel; diagnostics go to stderr.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
import { toTextOutput, UnifiedExec, type ExecCommandOutput } from "@execmux/client";
import { connectWith, parseClientArgs } from "./client-args.js";

const asToolResult = (result: ExecCommandOutput) => ({ content: [{ type: "text" as const, text: toTextOutput(result) }] });
const asToolError = (error: unknown) => ({
  isError: true,
  content: [{ type: "text" as const, text: `Error: ${error instanceof Error ? error.message : String(error)}` }],
});

export async function mcpCommand(argv: string[]): Promise<void> {
  const args = parseClientArgs(argv, process.env, { "--cwd": "value" });
  const client = await connectWith(args, { clientName: "execmux-mcp" });
  const exec = new UnifiedExec(client);
  const defaultCwd = args.flags.get("--cwd")?.at(-1);

  const server = new McpServer({ name: "execmux", version: "0.1.0" });
  server.registerTool(
    "exec_command",
    {
      title: "Run a command",
      description:
        "Runs a shell command on the remote machine, in a terminal (PTY). Waits up to yield_time_ms for it to finish, " +
        "then returns the output so far and either 'Process exited with code N' or 'Process running with session ID N'. " +
        "For a long-running or interactive command, use write_stdin with that session ID to type into it or to collect " +
        "more output. Output over max_output_tokens is cut in the middle.",
      inputSchema: {
        cmd: z.string().describe("The shell command line to run, e.g. 'ls -la' or 'npm test'."),
        workdir: z.string().optional().describe("Absolute directory to run it in."),
        yield_time_ms: z.number().int().min(0).optional().describe("How long to wait for output before returning (default 1000, at most 60000)."),
        max_output_tokens: z.number().int().min(1).optional().describe("Cap on the output returned, in tokens (about 4 bytes each; default 10000)."),
        shell: z.string().optional().describe("Shell to run the command with (default /bin/bash)."),
        login: z.boolean().optional().describe("Run it as a login shell, loading profiles (default true)."),
      },
    },
    async (input) => {
      try {
        const cwd = input.workdir ?? defaultCwd;
        return asToolResult(
          await exec.execCommand({
            cmd: input.cmd,
            ...(cwd !== undefined ? { cwd } : {}),
            ...(input.yield_time_ms !== undefined ? { yieldTimeMs: input.yield_time_ms } : {}),
            ...(input.max_output_tokens !== undefined ? { maxOutputTokens: input.max_output_tokens } : {}),
            ...(input.shell !== undefined ? { shell: input.shell } : {}),
            ...(input.login !== undefined ? { login: input.login } : {}),
          }),
        );
      } catch (error) {
        return asToolError(error);
      }
    },
  );
  server.registerTool(
    "write_stdin",
    {
      title: "Type into a running command",
      description:
        "Writes characters to the terminal of a command started by exec_command that is still running (by its session ID), " +
        "then waits up to yield_time_ms and returns the new output. Include '\\n' to press Enter; use '\\u0003' for Ctrl-C. " +
        "Empty chars just collects output that arrived meanwhile. A session whose process has exited is gone.",
      inputSchema: {
        session_id: z.number().int().min(0).describe("The session ID exec_command reported."),
        chars: z.string().optional().describe("Characters to type (default: none, just poll)."),
        yield_time_ms: z.number().int().min(0).optional().describe("How long to wait for output (default 1000, at most 60000)."),
        max_output_tokens: z.number().int().min(1).optional().describe("Cap on the output returned, in tokens (default 10000)."),
      },
    },
    async (input) => {
      try {
        return asToolResult(
          await exec.writeStdin({
            sessionId: input.session_id,
            chars: input.chars ?? "",
            ...(input.yield_time_ms !== undefined ? { yieldTimeMs: input.yield_time_ms } : {}),
            ...(input.max_output_tokens !== undefined ? { maxOutputTokens: input.max_output_tokens } : {}),
          }),
        );
      } catch (error) {
        return asToolError(error);
      }
    },
  );

  const transport = new StdioServerTransport();
  transport.onclose = () => {
    void exec.terminateAll().finally(() => {
      client.close();
      process.exit(0);
    });
  };
  await server.connect(transport);
  process.stdin.on("end", () => transport.onclose?.());
  process.stderr.write(`execmux mcp: serving exec_command and write_stdin on stdio, backed by ${args.url}\n`);
}
