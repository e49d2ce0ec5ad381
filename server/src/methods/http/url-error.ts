/**
 * Why a URL does not parse, in rust-url's words. Node's WHATWG parser and
 * rust-url accept and refuse the same URLs, but Node only says "Invalid URL";
 * upstream's message names the part that is wrong, so this finds it the way
 * rust-url's parser meets it: the scheme, then the host, then the port.
 */

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;
/** A host whose last label is a number is parsed as IPv4 (WHATWG "ends in a number"). */
const NUMERIC_LABEL = /^(?:\d+|0[xX][0-9A-Fa-f]*)$/;

export function urlErrorReason(input: string): string {
  // Both parsers trim leading and trailing C0 controls and spaces first.
  const text = input.replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, "");
  if (!SCHEME.test(text)) return "relative URL without a base";
  const authority = /^[^:]*:[/\\]*([^/\\?#]*)/.exec(text)?.[1] ?? "";
  const hostAndPort = authority.slice(authority.lastIndexOf("@") + 1);
  if (hostAndPort.startsWith("[")) {
    const close = hostAndPort.indexOf("]");
    if (close === -1 || !isValidIpv6(hostAndPort.slice(1, close))) return "invalid IPv6 address";
    return portError(hostAndPort.slice(close + 1)) ?? "invalid IPv6 address";
  }
  const colon = hostAndPort.lastIndexOf(":");
  const host = colon === -1 ? hostAndPort : hostAndPort.slice(0, colon);
  if (host === "") return "empty host";
  const labels = safeDecode(host).split(".");
  if (labels.length > 1 && labels[labels.length - 1] === "") labels.pop();
  if (NUMERIC_LABEL.test(labels[labels.length - 1] ?? "")) {
    if (!isParsableHost(host)) return "invalid IPv4 address";
  } else if (!isParsableHost(host)) {
    return "invalid international domain name";
  }
  return (colon === -1 ? undefined : portError(hostAndPort.slice(colon))) ?? "invalid international domain name";
}

/** `:8080` is fine, `:` is fine (default port), anything else that is not 0..65535 is not. */
function portError(suffix: string): string | undefined {
  if (suffix === "" || suffix === ":") return undefined;
  const digits = suffix.slice(1);
  return suffix.startsWith(":") && /^\d+$/.test(digits) && Number(digits) <= 65535 ? undefined : "invalid port number";
}

function isValidIpv6(text: string): boolean {
  return URL.canParse(`http://[${text}]/`);
}

function isParsableHost(host: string): boolean {
  return URL.canParse(`http://${host}/`);
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
