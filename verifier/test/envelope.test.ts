/** The v1 evidence known answer (tests/vectors/evidence-v1.json): the exact bytes signed, the key id. */

import { strict as assert } from "node:assert";
import { createPrivateKey, createPublicKey } from "node:crypto";
import { test } from "node:test";

import { b64UrlDecode, hex } from "../src/base64.ts";
import { signingMessage, verifyEnvelope } from "../src/envelope.ts";
import { isJsonObject } from "../src/json.ts";
import { PublicKeyring, evidenceKeyId } from "../src/keyring.ts";
import { ed25519PublicKey, ed25519Verify } from "../src/ed25519.ts";
import { loadVectors, str } from "./vectors.ts";

const VECTOR = loadVectors("evidence-v1.json");
// PKCS#8 DER of an Ed25519 private key is this prefix and the 32-byte seed (RFC 8410).
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

function publicFromSeed(seedHex: string): Uint8Array {
  const key = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, Buffer.from(seedHex, "hex")]), format: "der", type: "pkcs8" });
  const jwk = createPublicKey(key).export({ format: "jwk" });
  const raw = b64UrlDecode(String(jwk.x), 32);
  assert.ok(raw !== null);
  return raw;
}

test("the signing message and signature of evidence-v1.json", () => {
  const unsigned = VECTOR["unsignedDetails"];
  assert.ok(isJsonObject(unsigned));
  const message = signingMessage({ ...unsigned, signature: "ignored" });
  assert.equal(hex(message), str(VECTOR["signingMessageHex"]));
  const pub = publicFromSeed(str(VECTOR["seedHex"]));
  assert.equal(evidenceKeyId(pub), unsigned["keyId"]);
  const signature = b64UrlDecode(str(VECTOR["signature"]), 64);
  assert.ok(signature !== null);
  assert.ok(ed25519Verify(ed25519PublicKey(pub), message, signature));
  const flipped = Uint8Array.from(signature);
  flipped[0] = (flipped[0] ?? 0) ^ 1;
  assert.ok(!ed25519Verify(ed25519PublicKey(pub), message, flipped));
});

test("the vector envelope is a match with its key active, and untrusted without it", () => {
  const unsigned = VECTOR["unsignedDetails"];
  assert.ok(isJsonObject(unsigned));
  const pub = publicFromSeed(str(VECTOR["seedHex"]));
  const keyring = PublicKeyring.parse(
    JSON.stringify({
      schema: "pi-operator-guard/keyring/v1",
      keys: [{ keyId: evidenceKeyId(pub), publicKey: Buffer.from(pub).toString("base64url"), status: "active", createdAtIso: "2026-11-22T00:00:00.000Z" }],
    }),
  );
  const envelope = { content: "x", details: { ...unsigned, signature: str(VECTOR["signature"]) } };
  const now = Date.parse("2026-11-22T01:00:10.000Z");
  const call = String(unsigned["toolCallId"]);
  assert.deepEqual(verifyEnvelope(envelope, { keyring, now, toolCallId: call }).decision, "match");
  assert.deepEqual(verifyEnvelope(JSON.stringify(envelope), { keyring, now, toolCallId: call }).reasons, []);
  assert.deepEqual(verifyEnvelope(envelope, { keyring: new PublicKeyring([]), now }).reasons, ["unknown-key"]);
  for (const missing of [null, undefined, "", {}, new Uint8Array()]) {
    assert.deepEqual(verifyEnvelope(missing, { keyring, now }).decision, "missing");
  }
});
