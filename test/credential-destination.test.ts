/**
 * A custom credential provider's destinations (server/src/network-proxy/credential-destination.ts),
 * read as upstream 0.171 reads them: which requests may carry the real value. Pure functions.
 */
import { describe, expect, it } from "vitest";
import { isSafeForAuthorization, matchesRequest, parseDestination, requestPath } from "../server/dist/network-proxy/credential-destination.js";

const request = (url: string) => {
  const parsed = new URL(url);
  const path = url.slice(url.indexOf("/", url.indexOf("://") + 3)).split("?")[0]!;
  return { scheme: parsed.protocol.slice(0, -1) as "http" | "https", host: parsed.hostname.replace(/^\[|\]$/g, ""), port: Number(parsed.port) || (parsed.protocol === "https:" ? 443 : 80), path };
};

describe("credential destinations", () => {
  it("read scheme, host, port and path prefix, defaulting to HTTPS (HTTP for loopback)", () => {
    expect(parseDestination("https://API.Vendor.example/v1")).toEqual({ scheme: "https", host: "api.vendor.example", wildcard: false, port: 443, pathPrefix: "/v1" });
    expect(parseDestination("vendor.example")).toMatchObject({ scheme: "https", port: 443, pathPrefix: "/" });
    expect(parseDestination("127.0.0.1:8080/v1")).toMatchObject({ scheme: "http", port: 8080, pathPrefix: "/v1" });
    expect(parseDestination("http://localhost:443/")).toMatchObject({ scheme: "http", port: 443 });
    expect(parseDestination("*.vendor.example")).toMatchObject({ host: "vendor.example", wildcard: true });
  });

  it("refuse what upstream refuses, in its words", () => {
    expect(() => parseDestination("http://vendor.example")).toThrow("credential destination must use HTTPS unless it targets loopback over HTTP");
    expect(() => parseDestination("ftp://vendor.example")).toThrow("credential destination must use HTTPS unless it targets loopback over HTTP");
    for (const bad of ["https://user@vendor.example", "https://vendor.example/?", "https://vendor.example/#x"]) {
      expect(() => parseDestination(bad), bad).toThrow("credential destination cannot include user information, a query, or a fragment");
    }
  });

  it("match a request on scheme, host, port and a path prefix ending at a segment boundary", () => {
    const v1 = parseDestination("https://vendor.example/v1");
    expect(["https://vendor.example/v1", "https://vendor.example/v1/x", "https://vendor.example:443/v1/x?q=1"].map((url) => matchesRequest(v1, request(url)))).toEqual([true, true, true]);
    const misses = ["https://vendor.example/v10", "https://vendor.example/v2/x", "http://vendor.example/v1", "https://vendor.example:8443/v1", "https://api.vendor.example/v1"];
    expect(misses.map((url) => matchesRequest(v1, request(url)))).toEqual(misses.map(() => false));
    const slash = parseDestination("https://vendor.example/v1/");
    expect([matchesRequest(slash, request("https://vendor.example/v1/x")), matchesRequest(slash, request("https://vendor.example/v1"))]).toEqual([true, false]);
    const wildcard = parseDestination("*.vendor.example");
    expect(["https://api.vendor.example/x", "https://a.b.vendor.example/", "https://vendor.example/"].map((url) => matchesRequest(wildcard, request(url)))).toEqual([true, true, false]);
  });

  it("never give a credential to a path a server could read as another resource", () => {
    const v1 = parseDestination("https://vendor.example/v1");
    for (const path of ["/v1/../admin", "/v1/./x", "/v1/%2e%2e/admin", "/v1/%2E/x", "/v1/a%2fb", "/v1/a%5cb", "/v1/a\\b", "/v1/a%25b", "/v1/%zz"]) {
      expect(isSafeForAuthorization(path), path).toBe(false);
      expect(matchesRequest(v1, { scheme: "https", host: "vendor.example", port: 443, path }), path).toBe(false);
    }
    expect(["/v1/a.b", "/v1/...", "/v1/a%20b", "/v1/.well-known"].map(isSafeForAuthorization)).toEqual([true, true, true, true]);
  });

  it("read a request target's path up to its query only: a `#` and what follows stay in it (a server may read them)", () => {
    const v1 = parseDestination("http://127.0.0.1:8080/v1");
    const path = requestPath("/v1/a#/../../v2?q=1");
    expect(path).toBe("/v1/a#/../../v2");
    expect(matchesRequest(v1, { scheme: "http", host: "127.0.0.1", port: 8080, path })).toBe(false);
    expect(matchesRequest(v1, { scheme: "http", host: "127.0.0.1", port: 8080, path: requestPath("/v1/a?x=#y") })).toBe(true);
  });
});
