/**
 * Evidence that says which screen answered (`approver`: `pi-dialog`, `cli`, `web`, signed),
 * beyond the shared vectors: envelopes given already decoded, every other value refused.
 */

import { strict as assert } from "node:assert";
import { createPrivateKey, sign } from "node:crypto";
import { test } from "node:test";

import { b64UrlEncode } from "../src/base64.ts";
import { APPROVERS, parseEnvelope, signingMessage, verifyEnvelope } from "../src/envelope.ts";
import * as index from "../src/index.ts";
import { type JsonObject, isJsonObject, loadJson } from "../src/json.ts";
import { envelopeKeyring, list, loadVectors, str } from "./vectors.ts";

const DOC = loadVectors("evidence", "envelopes.json");
const KEYRING = envelopeKeyring(DOC);
const NOW = Date.parse("2026-11-22T01:00:10.000Z");
// PKCS#8 DER of an Ed25519 private key is this prefix and the 32-byte seed (RFC 8410).
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const ACTIVE = createPrivateKey({
  key: Buffer.concat([PKCS8_PREFIX, Buffer.from(str(DOC["activeSeedHex"]), "hex")]),
  format: "der",
  type: "pkcs8",
});
const MALFORMED = { decision: "malformed", reasons: ["schema-violation"] };
const MATCH = { decision: "match", reasons: [] };

function vector(id: string): JsonObject {
  const found = list(DOC["vectors"]).find((v) => v["id"] === id);
  assert.ok(found !== undefined, id);
  return found;
}

/** The details of a shared vector's envelope, as JSON.parse gives them. */
function parsedDetails(id: string): Record<string, unknown> {
  return (JSON.parse(str(vector(id)["envelope"])) as { details: Record<string, unknown> }).details;
}

/** `details` signed by the vectors' active key, exactly as they are. */
function signed(details: Record<string, unknown>): Record<string, unknown> {
  const forSigning = loadJson(JSON.stringify(details));
  assert.ok(isJsonObject(forSigning));
  const unsigned: JsonObject = {};
  for (const [key, value] of Object.entries(forSigning)) if (key !== "signature") unsigned[key] = value;
  const signature = b64UrlEncode(new Uint8Array(sign(null, signingMessage(unsigned), ACTIVE)));
  return { ...details, signature };
}

function check(details: Record<string, unknown>, asText = false): { decision: string; reasons: string[] } {
  const text = JSON.stringify({ content: "x", details });
  const envelope = asText ? text : (JSON.parse(text) as JsonObject);
  const { decision, reasons } = verifyEnvelope(envelope, { keyring: KEYRING, now: NOW, toolCallId: String(details["toolCallId"]) });
  return { decision, reasons };
}

test("the approvers are pi's dialog, a second terminal and the page; exported", () => {
  assert.deepEqual([...APPROVERS], ["pi-dialog", "cli", "web"]);
  assert.equal(index.APPROVERS, APPROVERS);
});

test("each approver verifies, as text and already decoded, and parses into the details", () => {
  for (const who of APPROVERS) {
    const details = parsedDetails(`valid-approver-${who}`);
    assert.equal(details["approver"], who);
    assert.deepEqual(check(details), MATCH, who);
    assert.deepEqual(check(details, true), MATCH, who);
    assert.equal(parseEnvelope(str(vector(`valid-approver-${who}`)["envelope"]))["approver"], who);
  }
});

test("evidence without an approver verifies as it always did", () => {
  const details = parsedDetails("valid");
  assert.equal("approver" in details, false);
  assert.deepEqual(check(details), MATCH);
});

test("an approver changed, added or removed after signing fails the signature", () => {
  const untrusted = { decision: "untrusted", reasons: ["signature-invalid"] };
  for (const from of APPROVERS) {
    const details = parsedDetails(`valid-approver-${from}`);
    for (const to of APPROVERS) {
      if (to !== from) assert.deepEqual(check({ ...details, approver: to }), untrusted, `${from} -> ${to}`);
    }
    const removed = Object.fromEntries(Object.entries(details).filter(([key]) => key !== "approver"));
    assert.deepEqual(check(removed), untrusted, `${from} removed`);
  }
  assert.deepEqual(check({ ...parsedDetails("valid"), approver: "web" }), untrusted);
});

test("any other approver is malformed, signed or not, as text or decoded", () => {
  const base = parsedDetails("valid-approver-cli");
  for (const bad of ["terminal", "CLI", "", "pi_dialog", " cli", 1, 0, 1.5, true, false, null, ["cli"], { name: "cli" }]) {
    const details = signed({ ...base, approver: bad });
    assert.deepEqual(check(details), MALFORMED, JSON.stringify(bad));
    assert.deepEqual(check(details, true), MALFORMED, JSON.stringify(bad));
    assert.deepEqual(check({ ...base, approver: bad }), MALFORMED, `${JSON.stringify(bad)} unsigned`);
  }
});

test("no other spelling of the field is read: an extra field is malformed", () => {
  const base = parsedDetails("valid");
  for (const key of ["Approver", "approvedBy", "approver_", "screen"]) {
    assert.deepEqual(check(signed({ ...base, [key]: "cli" })), MALFORMED, key);
  }
});
