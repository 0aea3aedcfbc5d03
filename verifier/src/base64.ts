/** Canonical base64 decoding: anything a re-encoding would not reproduce is refused. */

const STD = /^[A-Za-z0-9+/]*={0,2}$/;
const URL = /^[A-Za-z0-9_-]*$/;

/** Standard base64 with padding (RFC 4648 section 4), canonical; `null` when it is not. */
export function b64StdDecode(text: string): Uint8Array | null {
  if (!STD.test(text) || text.length % 4 !== 0) return null;
  const raw = Buffer.from(text, "base64");
  return raw.toString("base64") === text ? new Uint8Array(raw) : null;
}

export function b64StdEncode(data: Uint8Array): string {
  return Buffer.from(data).toString("base64");
}

/** Unpadded base64url (RFC 4648 section 5) of exactly `expectedLength` bytes; else `null`. */
export function b64UrlDecode(text: string, expectedLength: number): Uint8Array | null {
  if (!URL.test(text)) return null;
  const raw = Buffer.from(text, "base64url");
  if (raw.length !== expectedLength || raw.toString("base64url") !== text) return null;
  return new Uint8Array(raw);
}

/** Unpadded base64url of any length, canonical (what a re-encoding reproduces); else `null`. */
export function b64UrlBytes(text: string): Uint8Array | null {
  if (!URL.test(text)) return null;
  const raw = Buffer.from(text, "base64url");
  return raw.toString("base64url") === text ? new Uint8Array(raw) : null;
}

export function b64UrlEncode(data: Uint8Array): string {
  return Buffer.from(data).toString("base64url");
}

export function hex(data: Uint8Array): string {
  return Buffer.from(data).toString("hex");
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}
