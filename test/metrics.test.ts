/** /metrics in Prometheus format, with bounded labels. */
import { describe, expect, it } from "vitest";
import { connect } from "@execmux/client";
import { startTestDaemon } from "./helpers/daemon.js";

describe("metrics", () => {
  it("counts connections, sessions, processes, bytes, requests and errors without ids in labels", async () => {
    const daemon = await startTestDaemon();
    const client = await connect(daemon.url);
    const handle = await client.start({ processId: "secret-process-name", argv: ["sh", "-c", "printf hello; exit 3"], cwd: "/tmp" });
    await handle.wait();
    await client.request("process/read", { processId: "nope" }).catch(() => undefined);
    const text = await (await fetch(daemon.url.replace("ws://", "http://") + "/metrics")).text();
    expect(text).toMatch(/^execmux_connections 1$/m);
    expect(text).toMatch(/^execmux_sessions\{state="attached"\} 1$/m);
    expect(text).toMatch(/^execmux_processes_started_total\{tty="false"\} 1$/m);
    expect(text).toMatch(/^execmux_processes_exited_total\{reason="failure"\} 1$/m);
    expect(text).toMatch(/^execmux_output_bytes_total\{stream="stdout"\} 5$/m);
    expect(text).toMatch(/^execmux_errors_total\{code="-32600"\} 1$/m);
    expect(text).toMatch(/^execmux_request_duration_seconds_count\{method="process\/start"\} 1$/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds /m);
    expect(text).not.toContain("secret-process-name");
    expect(text).not.toContain(client.sessionId);
    expect(text).not.toContain("/tmp");
    client.close();
  });
});
