/** Ed25519 with Node's built-in `crypto` only. */

import { createPublicKey, verify, type KeyObject } from "node:crypto";

import { b64UrlEncode } from "./base64.ts";

/** An Ed25519 public key from its 32 raw bytes (through a JWK: `crypto` has no raw import). */
export function ed25519PublicKey(raw: Uint8Array): KeyObject {
  if (raw.length !== 32) throw new RangeError("an Ed25519 public key is 32 bytes");
  return createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: b64UrlEncode(raw) }, format: "jwk" });
}

/** Verification that never throws: a signature that is not even 64 bytes is simply `false`. */
export function ed25519Verify(key: KeyObject, message: Uint8Array, signature: Uint8Array): boolean {
  if (signature.length !== 64) return false;
  try {
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
}
