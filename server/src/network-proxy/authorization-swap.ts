/**
 * The one substitution every masked credential shares: an Authorization
 * header that carries a placeholder gets the real value in its place.
 */
/** `<scheme> <placeholder>` or Basic with the placeholder as user or password, with `real` in its place; anything else as it is. */
export function swapAuthorization(value: string, placeholder: string, real: string): string {
  const space = value.indexOf(" ");
  if (space < 0) return value;
  const scheme = value.slice(0, space);
  const rest = value.slice(space + 1).trim();
  if (scheme.toLowerCase() === "basic") {
    const decoded = Buffer.from(rest, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon < 0) return value;
    const swap = (field: string) => (field === placeholder ? real : field);
    const user = decoded.slice(0, colon);
    const password = decoded.slice(colon + 1);
    if (user !== placeholder && password !== placeholder) return value;
    return `${scheme} ${Buffer.from(`${swap(user)}:${swap(password)}`).toString("base64")}`;
  }
  return rest === placeholder ? `${scheme} ${real}` : value;
}
