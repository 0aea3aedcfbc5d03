/**
 * Evidence a scoped grant covered (`origin: "runtime-grant"`, `coveredBy`) and `requireDialog`,
 * beyond the shared vectors: envelopes given already decoded, and the option's default.
 */

import { strict as assert } from "node:assert";
import { createPrivateKey, sign } from "node:crypto";
import { test } from "node:test";

import { b64UrlEncode } from "../src/base64.ts";
import { GRANT_ORIGIN, TRUSTED_ORIGINS, signingMessage, verifyEnvelope } from "../src/envelope.ts";
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

/** The details of a shared vector's envelope, as JSON.parse gives them (numbers, not bigints). */
function parsedDetails(id: string): Record<string, unknown> {
  const vector = list(DOC["vectors"]).find((v) => v["id"] === id);
  assert.ok(vector !== undefined, id);
  return (JSON.parse(str(vector["envelope"])) as { details: Record<string, unknown> }).details;
}

/** `details` signed by the vectors' active key (the `coveredBy.use` a bigint while signing). */
function signed(details: Record<string, unknown>): Record<string, unknown> {
  const forSigning = loadJson(JSON.stringify(details));
  assert.ok(isJsonObject(forSigning));
  const unsigned: JsonObject = {};
  for (const [key, value] of Object.entries(forSigning)) if (key !== "signature") unsigned[key] = value;
  const signature = b64UrlEncode(new Uint8Array(sign(null, signingMessage(unsigned), ACTIVE)));
  return { ...details, signature };
}

function check(details: Record<string, unknown>, requireDialog?: boolean): { decision: string; reasons: string[] } {
  const envelope = JSON.parse(JSON.stringify({ content: "x", details })) as JsonObject;
  const call = { keyring: KEYRING, now: NOW, toolCallId: String(details["toolCallId"]) };
  const options = requireDialog === undefined ? call : { ...call, requireDialog };
  const { decision, reasons } = verifyEnvelope(envelope, options);
  return { decision, reasons };
}

test("runtime-grant is a trusted origin unless the caller narrows them", () => {
  assert.ok(TRUSTED_ORIGINS.includes(GRANT_ORIGIN));
  const details = parsedDetails("valid-runtime-grant");
  const envelope = JSON.parse(JSON.stringify({ content: "x", details })) as JsonObject;
  const narrowed = verifyEnvelope(envelope, { keyring: KEYRING, now: NOW, toolCallId: "call_1", trustedOrigins: ["runtime-ui-confirm"] });
  assert.deepEqual(narrowed.reasons, ["origin-untrusted"]);
});

test("a grant-covered envelope given already decoded (use a number) verifies", () => {
  const details = parsedDetails("valid-runtime-grant");
  assert.equal(typeof (details["coveredBy"] as Record<string, unknown>)["use"], "number");
  assert.deepEqual(check(details), { decision: "match", reasons: [] });
  assert.deepEqual(check(details, false), { decision: "match", reasons: [] });
});

test("requireDialog refuses a grant's evidence, and only a grant's", () => {
  const granted = parsedDetails("valid-runtime-grant");
  const result = verifyEnvelope(JSON.stringify({ content: "x", details: granted }), { keyring: KEYRING, now: NOW, toolCallId: "call_1", requireDialog: true });
  assert.equal(result.decision, "not-dialog");
  assert.deepEqual(result.reasons, ["grant-covered"]);
  assert.equal(result.evidenceId, granted["evidenceId"]);
  assert.equal(result.dispatchAllowed, false);
  assert.equal(result.authorization, "none");
  for (const id of ["valid", "valid-operator-contract-review", "valid-runtime-effects-confirm"]) {
    assert.deepEqual(check(parsedDetails(id), true), { decision: "match", reasons: [] }, id);
  }
});

test("decoded: coveredBy.use must still be an integer from 1 to 1000", () => {
  const granted = parsedDetails("valid-runtime-grant");
  const coveredBy = granted["coveredBy"] as Record<string, unknown>;
  for (const use of [1, 1000]) {
    assert.deepEqual(check(signed({ ...granted, coveredBy: { ...coveredBy, use } })), { decision: "match", reasons: [] }, String(use));
  }
  for (const use of [0, 1001, 2.5, -1, true, "2", null, Number.MAX_SAFE_INTEGER + 2]) {
    const details = { ...granted, coveredBy: { ...coveredBy, use }, signature: granted["signature"] };
    assert.deepEqual(check(details), { decision: "malformed", reasons: ["schema-violation"] }, String(use));
  }
});

test("decoded: the origin and coveredBy must agree", () => {
  const granted = parsedDetails("valid-runtime-grant");
  const dialog = parsedDetails("valid");
  const bare = Object.fromEntries(Object.entries(granted).filter(([key]) => key !== "coveredBy"));
  for (const details of [signed(bare), signed({ ...dialog, coveredBy: granted["coveredBy"] }), signed({ ...granted, coveredBy: null })]) {
    assert.deepEqual(check(details), { decision: "malformed", reasons: ["schema-violation"] });
    assert.deepEqual(check(details, true), { decision: "malformed", reasons: ["schema-violation"] });
  }
});
