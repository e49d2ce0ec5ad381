/**
 * `execmux mcp --url ws://...`: a Model Context Protocol server on stdio
 * whose tools, `exec_command` and `write_stdin`, run on a remote execmux
 * daemon. Any MCP-capable agent gets a remote sandbox with no code. stdout
 * is the MCP channel; diagnostics go to stderr.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
import { SessionLostError, toTextOutput, type ExecCommandOutput, type UnifiedExec } from "@execmux/client";
import { EXECMUX_VERSION } from "../version.js";
import { clientNameOf, connectWith, parseClientArgs } from "./client-args.js";
import { McpBackend } from "./mcp-backend.js";
import { remoteCwd, resolveRemotePath } from "./remote-cwd.js";

type ToolResult = { isError?: boolean; content: { type: "text"; text: string }[] };

/** A notice (the daemon's session was lost) goes first, as its own text block, so the upstream-shaped text stays intact. */
const withNotice = (notice: string | undefined, result: ToolResult): ToolResult =>
  notice ? { ...result, content: [{ type: "text", text: notice }, ...result.content] } : result;
const asToolError = (error: unknown): ToolResult => ({
  isError: true,
  content: [{ type: "text", text: `Error: ${error instanceof Error ? error.message : String(error)}` }],
});

export async function mcpCommand(argv: string[]): Promise<void> {
  const args = parseClientArgs(argv, process.env, { "--cwd": "value" });
  const defaultCwd = remoteCwd(args.url, args.flags.get("--cwd")?.at(-1));
  const backend = new McpBackend(
    args.url,
    () => connectWith(args, { clientName: clientNameOf("mcp") }),
    (line) => process.stderr.write(`execmux mcp: ${line}\n`),
  );
  backend.start();

  /**
   * Runs a tool on the current session. A call cut off by the loss of the
   * daemon's session is run once more on the new one: nothing of it ran
   * anywhere that still exists.
   */
  const run = async (tool: (exec: UnifiedExec) => Promise<ExecCommandOutput>): Promise<ToolResult> => {
    let notice: string | undefined;
    for (let attempt = 1; ; attempt++) {
      try {
        const current = await backend.current();
        notice = current.notice ?? notice;
        return withNotice(notice, { content: [{ type: "text", text: toTextOutput(await tool(current.exec)) }] });
      } catch (error) {
        if (error instanceof SessionLostError && attempt === 1) continue;
        return withNotice(notice, asToolError(error));
      }
    }
  };

  const server = new McpServer({ name: "execmux", version: EXECMUX_VERSION });
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
    (input) =>
      run((exec) =>
        exec.execCommand({
          cmd: input.cmd,
          cwd: input.workdir === undefined ? defaultCwd : resolveRemotePath(defaultCwd, input.workdir),
          ...(input.yield_time_ms !== undefined ? { yieldTimeMs: input.yield_time_ms } : {}),
          ...(input.max_output_tokens !== undefined ? { maxOutputTokens: input.max_output_tokens } : {}),
          ...(input.shell !== undefined ? { shell: input.shell } : {}),
          ...(input.login !== undefined ? { login: input.login } : {}),
        }),
      ),
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
    (input) =>
      run(async (exec) => {
        if (backend.wasLost(input.session_id)) {
          throw new Error(
            `session ID ${input.session_id} was lost with the daemon's session (the daemon restarted, or the session expired); ` +
              "its process is gone: run the command again with exec_command",
          );
        }
        return exec.writeStdin({
          sessionId: input.session_id,
          chars: input.chars ?? "",
          ...(input.yield_time_ms !== undefined ? { yieldTimeMs: input.yield_time_ms } : {}),
          ...(input.max_output_tokens !== undefined ? { maxOutputTokens: input.max_output_tokens } : {}),
        });
      }),
  );

  const transport = new StdioServerTransport();
  transport.onclose = () => {
    void backend.close().finally(() => process.exit(0));
  };
  await server.connect(transport);
  process.stdin.on("end", () => transport.onclose?.());
  process.stderr.write(`execmux mcp: serving exec_command and write_stdin on stdio, backed by ${args.url}\n`);
}
