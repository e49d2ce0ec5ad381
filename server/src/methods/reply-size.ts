/** Characters of standard base64 (padded) for `bytes` bytes: what a reply carrying them reserves of its client's reply budget. */
export const base64Length = (bytes: number): number => Math.ceil(bytes / 3) * 4;
