/**
 * The proxy's policy as a pure unit: upstream's host patterns (its own tests'
 * examples, codex network-proxy `policy.rs`) and the order of its verdicts.
 * What the proxy does with them on the wire is in the differential cases.
 */
import { describe, expect, it } from "vitest";
import { isNonPublicAddress } from "../server/dist/network-proxy/address-class.js";
import { HostPatternSet, normalizeHost } from "../server/dist/network-proxy/host-patterns.js";
import { NetworkPolicy } from "../server/dist/network-proxy/policy.js";
import { codexProxy } from "./helpers/exec-server-frames.js";

const set = (patterns: string[]) => new HostPatternSet(patterns, { allowGlobalWildcard: true, listName: "network.allowed_domains" });

describe("host patterns", () => {
  it("match as upstream's globset does", () => {
    expect(set(["Example.COM."]).matches("example.com")).toBe(true);
    expect(set(["Example.COM."]).matches("api.example.com")).toBe(false);
    expect(set(["*.Example.COM."]).matches("api.example.com")).toBe(true);
    expect(set(["*.Example.COM."]).matches("example.com")).toBe(false);
    expect(set(["**.Example.COM."]).matches("example.com")).toBe(true);
    expect(set(["**.Example.COM."]).matches("a.b.example.com")).toBe(true);
    expect(set(["region*.v2.argotunnel.com"]).matches("region1.v2.argotunnel.com")).toBe(true);
    expect(set(["region*.v2.argotunnel.com"]).matches("region.v2.argotunnel.com")).toBe(true);
    expect(set(["region*.v2.argotunnel.com"]).matches("xregion1.v2.argotunnel.com")).toBe(false);
    expect(set(["region*.v2.argotunnel.com"]).matches("foo.region1.v2.argotunnel.com")).toBe(false);
    expect(set(["[::1]"]).matches("::1")).toBe(true);
    expect(set(["[::1]"]).matches("0:0:0:0:0:0:0:1")).toBe(true);
    expect(set(["*"]).matches("anything.example")).toBe(true);
  });

  it("refuse what upstream refuses", () => {
    expect(() => new HostPatternSet(["*"], { allowGlobalWildcard: false, listName: "network.denied_domains" })).toThrow(
      "invalid value for network.denied_domains: * (allowed exact hosts or scoped wildcards like *.example.com or **.example.com)",
    );
    expect(() => set(["["])).toThrow("brackets are only supported for IPv6 literals or [*]: [");
    expect(() => set(["[example.com]"])).toThrow("brackets are only supported");
  });

  it("normalize hosts: case, port, brackets, trailing dots, one IPv6 spelling", () => {
    expect(normalizeHost("API.Example.com.:443")).toBe("api.example.com");
    expect(normalizeHost("[::FFFF:127.0.0.1]")).toBe("::ffff:7f00:1");
    expect(normalizeHost("fe80::1%25lo0")).toBe("fe80::1%lo0");
  });

  it("count upstream's non-public ranges as local, and IPv4 inside IPv6 as IPv4", () => {
    for (const address of ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.1.1", "100.64.0.1", "192.0.2.2", "198.18.0.1", "0.0.0.0", "::1", "fd00::2", "fe80::1", "::ffff:7f00:1"]) {
      expect(isNonPublicAddress(address), address).toBe(true);
    }
    for (const address of ["1.1.1.1", "8.8.8.8", "2606:4700::1111", "::ffff:808:808"]) expect(isNonPublicAddress(address), address).toBe(false);
  });
});

const policy = (domains: Record<string, "allow" | "deny" | "none">, extra: Record<string, unknown> = {}) =>
  NetworkPolicy.from({ ...codexProxy(domains), enableSocks5Udp: false, ...extra } as never);

describe("the policy's verdicts", () => {
  it("deny first, then local addresses, then the allow list", () => {
    const rules = policy({ "**.example.com": "allow", "bad.example.com": "deny", "127.0.0.1": "allow", "*": "allow" });
    expect(rules.judgeHost("bad.example.com").reason).toBe("denied");
    expect(rules.judgeHost("api.example.com").reason).toBe("allow");
    // Loopback passes only where it is named exactly, whatever `*` says.
    expect(rules.judgeHost("127.0.0.1").reason).toBe("allow");
    expect(rules.judgeHost("127.0.0.2").reason).toBe("not_allowed_local");
    expect(rules.judgeHost("localhost").reason).toBe("not_allowed_local");
    expect(policy({}).judgeHost("api.example.com").reason).toBe("not_allowed");
    expect(policy({ "a.example": "none" }).judgeHost("a.example").reason).toBe("not_allowed");
  });

  it("refuse a name that resolves inside unless local binding is allowed", () => {
    expect(policy({ "intranet.example": "allow" }).admitsAddress("intranet.example", "10.0.0.5")).toBe(false);
    expect(policy({ "intranet.example": "allow" }, { allowLocalBinding: true }).admitsAddress("intranet.example", "10.0.0.5")).toBe(true);
    expect(policy({ localhost: "allow" }).admitsAddress("localhost", "127.0.0.1")).toBe(true);
    expect(policy({ "**.example.com": "allow" }).admitsAddress("api.example.com", "93.184.216.34")).toBe(true);
  });

  it("limited mode lets GET, HEAD and OPTIONS through, no tunnel and no SOCKS5", () => {
    const limited = policy({ "*": "allow" }, { mode: "limited" });
    expect(limited.judgeMode("http", "GET")).toBeUndefined();
    expect(limited.judgeMode("http", "head")).toBeUndefined();
    expect(limited.judgeMode("http", "POST")?.reason).toBe("method_not_allowed");
    expect(limited.judgeMode("https_connect", "CONNECT")?.reason).toBe("mitm_required");
    expect(limited.judgeMode("socks5_tcp", undefined)?.reason).toBe("method_not_allowed");
    expect(policy({ "*": "allow" }).judgeMode("http", "POST")).toBeUndefined();
  });
});
