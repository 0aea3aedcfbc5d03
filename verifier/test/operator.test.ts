/**
 * The operator's own signature (`operatorSignature`, ./src/operator.ts) beyond the shared
 * vectors: assertions made here by Node's own crypto for each algorithm, the COSE_Key decoder's
 * refusals, the keyring's `operators` parsing, envelopes given already decoded, and the
 * keyring's signature covering `operators` (the CLI's `--require-operator-signature`:
 * tests/verifier/test_ts_verifier.py).
 */

import { strict as assert } from "node:assert";
import { createHash, createPrivateKey, generateKeyPairSync, sign, verify, type KeyObject } from "node:crypto";
import { test } from "node:test";

import { b64UrlBytes, b64UrlEncode } from "../src/base64.ts";
import { signingMessage, verifyEnvelope } from "../src/envelope.ts";
import * as index from "../src/index.ts";
import { canonicalBytes } from "../src/jcs.ts";
import { type JsonObject, isJsonObject, loadJson } from "../src/json.ts";
import { KeyringError, PublicKeyring } from "../src/keyring.ts";
import {
  CoseKeyError,
  OPERATOR_REASONS,
  STATEMENT_SCHEMA,
  approvalStatement,
  checkOperatorSignature,
  coseKeyObject,
  decodeCoseKey,
  statementChallenge,
  type CoseAlgorithm,
  type OperatorCredential,
} from "../src/operator.ts";
import { envelopeKeyring, list, loadVectors, str } from "./vectors.ts";

const DOC = loadVectors("operator", "envelopes.json");
const KEYRING = envelopeKeyring(DOC);
const NOW = Date.parse("2026-11-22T01:00:10.000Z");
const ORIGIN = "http://localhost:8790";
// PKCS#8 DER of an Ed25519 private key is this prefix and the 32-byte seed (RFC 8410).
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const GUARD = createPrivateKey({
  key: Buffer.concat([PKCS8_PREFIX, Buffer.from(str(DOC["guardSeedHex"]), "hex")]),
  format: "der",
  type: "pkcs8",
});
const UP = 0x01;
const UV = 0x04;

function vector(id: string): JsonObject {
  const found = list(DOC["vectors"]).find((v) => v["id"] === id);
  assert.ok(found !== undefined, id);
  return found;
}

/** A vector's details as strict decoding gives them. */
function detailsOf(id: string): JsonObject {
  const envelope = loadJson(str(vector(id)["envelope"]));
  assert.ok(isJsonObject(envelope) && isJsonObject(envelope["details"]));
  return envelope["details"];
}

function sha256(data: Uint8Array | string): Uint8Array {
  return new Uint8Array(createHash("sha256").update(data).digest());
}

// --- a little CBOR, to write COSE keys --------------------------------------------------------

function cborHead(major: number, n: number): number[] {
  if (n < 24) return [(major << 5) | n];
  if (n < 256) return [(major << 5) | 24, n];
  return [(major << 5) | 25, n >> 8, n & 0xff];
}

function cbor(value: number | Uint8Array): number[] {
  if (value instanceof Uint8Array) return [...cborHead(2, value.length), ...value];
  return value >= 0 ? cborHead(0, value) : cborHead(1, -1 - value);
}

function coseMap(entries: [number, number | Uint8Array][]): Uint8Array {
  return new Uint8Array([...cborHead(5, entries.length), ...entries.flatMap(([k, v]) => [...cbor(k), ...cbor(v)])]);
}

function jwkBytes(key: KeyObject, member: "x" | "y" | "n" | "e"): Uint8Array {
  const value = key.export({ format: "jwk" })[member];
  assert.ok(typeof value === "string");
  return new Uint8Array(Buffer.from(value, "base64url"));
}

interface Made {
  algorithm: CoseAlgorithm;
  privateKey: KeyObject;
  cose: Uint8Array;
}

function authenticator(algorithm: CoseAlgorithm): Made {
  if (algorithm === -7) {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    return { algorithm, privateKey, cose: coseMap([[1, 2], [3, -7], [-1, 1], [-2, jwkBytes(publicKey, "x")], [-3, jwkBytes(publicKey, "y")]]) };
  }
  if (algorithm === -8) {
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    return { algorithm, privateKey, cose: coseMap([[1, 1], [3, -8], [-1, 6], [-2, jwkBytes(publicKey, "x")]]) };
  }
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return { algorithm, privateKey, cose: coseMap([[1, 3], [3, -257], [-1, jwkBytes(publicKey, "n")], [-2, jwkBytes(publicKey, "e")]]) };
}

function credential(made: Made, id: string, changes: Partial<OperatorCredential> = {}): OperatorCredential {
  return {
    credentialId: id,
    publicKey: b64UrlEncode(made.cose),
    algorithm: made.algorithm,
    signCount: 0,
    label: "made here",
    rpId: "localhost",
    origin: ORIGIN,
    status: "active",
    enrolledAtIso: "2026-11-21T12:00:00.000Z",
    removedAtIso: null,
    ...changes,
  };
}

/** The pending call's id the vectors' envelopes are bound to. */
const CALL = String(detailsOf("valid-without-operator-signature")["toolCallId"]);

/** The unsigned details of the vectors' envelope without an operator signature. */
function baseDetails(): JsonObject {
  const details = { ...detailsOf("valid-without-operator-signature") };
  delete details["signature"];
  return details;
}

function assertionFor(made: Made, id: string, details: JsonObject, counter = 1, flags = UP | UV): JsonObject {
  const authData = new Uint8Array([...sha256("localhost"), flags, ...[24, 16, 8, 0].map((s) => (counter >>> s) & 0xff)]);
  const client = new TextEncoder().encode(
    JSON.stringify({ type: "webauthn.get", challenge: b64UrlEncode(statementChallenge(approvalStatement(details))), origin: ORIGIN, crossOrigin: false }),
  );
  const signed = Buffer.concat([authData, sha256(client)]);
  const signature = sign(made.algorithm === -8 ? null : "sha256", signed, made.privateKey);
  return { credentialId: id, authenticatorData: b64UrlEncode(authData), clientDataJson: b64UrlEncode(client), signature: b64UrlEncode(new Uint8Array(signature)) };
}

function guardSigned(details: JsonObject): JsonObject {
  return { ...details, signature: b64UrlEncode(new Uint8Array(sign(null, signingMessage(details), GUARD))) };
}

function keyringWith(...operators: OperatorCredential[]): PublicKeyring {
  return new PublicKeyring(KEYRING.keys.values(), operators);
}

test("the operator's exports", () => {
  assert.equal(index.checkOperatorSignature, checkOperatorSignature);
  assert.equal(index.OPERATOR_REASONS, OPERATOR_REASONS);
  assert.equal(OPERATOR_REASONS.length, 11);
  assert.deepEqual([...index.OPERATOR_ALGORITHMS], [-7, -8, -257]);
  assert.equal(index.STATEMENT_SCHEMA, "pi-operator-guard/approval-statement/v1");
});

test("the statement: the schema and the ten fields when present and not null; its challenge is in the valid vector", () => {
  const details = detailsOf("valid-es256");
  const statement = approvalStatement({ ...details, path: null, origin: "runtime-grant" });
  assert.deepEqual(Object.keys(statement), ["schema", "evidenceId", "actionKind", "toolName", "scope", "payloadHash", "toolCallId", "createdAtIso", "expiresAtIso", "keyId"]);
  assert.equal(statement["schema"], STATEMENT_SCHEMA);
  const operator = details["operatorSignature"];
  assert.ok(isJsonObject(operator));
  const client = JSON.parse(Buffer.from(str(operator["clientDataJson"]), "base64url").toString("utf8")) as { challenge: string };
  assert.equal(client.challenge, b64UrlEncode(statementChallenge(approvalStatement(details))));
});

for (const algorithm of [-7, -8, -257] as const) {
  test(`an assertion Node made with ${algorithm} verifies, as text and already decoded; tampering does not`, () => {
    const made = authenticator(algorithm);
    const id = b64UrlEncode(new Uint8Array([algorithm & 0xff, 1, 2, 3]));
    const keyring = keyringWith(credential(made, id));
    const details = baseDetails();
    const envelope = { content: "x", details: guardSigned({ ...details, operatorSignature: assertionFor(made, id, details) }) };
    const text = JSON.stringify(envelope, (_, v: unknown) => (typeof v === "bigint" ? Number(v) : v));
    for (const raw of [text, JSON.parse(text) as JsonObject]) {
      const result = verifyEnvelope(raw, { keyring, now: NOW, toolCallId: CALL, requireOperatorSignature: true });
      assert.deepEqual([result.decision, result.reasons, result.operatorSignature], ["match", [], "verified"]);
    }
    // another toolName, re-signed by the guard: the operator signed the other statement
    const moved = { content: "x", details: guardSigned({ ...details, toolName: "write", operatorSignature: assertionFor(made, id, details) }) };
    assert.deepEqual(verifyEnvelope(JSON.parse(JSON.stringify(moved)) as JsonObject, { keyring, now: NOW, toolCallId: CALL }).reasons, ["operator-challenge-mismatch"]);
    // the same assertion under an enrolment with a higher count
    const later = keyringWith(credential(made, id, { signCount: 1 }));
    assert.deepEqual(verifyEnvelope(text, { keyring: later, now: NOW, toolCallId: CALL }).reasons, ["operator-sign-count"]);
    // another key enrolled under the id
    const other = keyringWith(credential(authenticator(algorithm), id));
    const refused = verifyEnvelope(text, { keyring: other, now: NOW, toolCallId: CALL });
    assert.deepEqual([refused.decision, refused.reasons, refused.operatorSignature], ["untrusted", ["operator-signature-invalid"], null]);
    // the enrolled COSE key says another algorithm than the keyring entry
    const mislabelled = keyringWith(credential(made, id, { algorithm: algorithm === -7 ? -8 : -7 }));
    assert.deepEqual(verifyEnvelope(text, { keyring: mislabelled, now: NOW, toolCallId: CALL }).reasons, ["operator-signature-invalid"]);
  });
}

test("without an operator signature: none, or not-operator-signed when required", () => {
  const text = str(vector("valid-without-operator-signature")["envelope"]);
  const plain = verifyEnvelope(text, { keyring: KEYRING, now: NOW, toolCallId: CALL });
  assert.deepEqual([plain.decision, plain.operatorSignature], ["match", "none"]);
  const required = verifyEnvelope(text, { keyring: KEYRING, now: NOW, toolCallId: CALL, requireOperatorSignature: true });
  assert.deepEqual([required.decision, required.reasons, required.operatorSignature], ["not-operator-signed", ["no-operator-signature"], null]);
  assert.equal(required.evidenceId, detailsOf("valid-without-operator-signature")["evidenceId"]);
});

test("the COSE_Key decoder reads integer labels with integer or byte string values, and nothing else", () => {
  const good = coseMap([[1, 1], [3, -8], [-1, 6], [-2, new Uint8Array(32)]]);
  const decoded = decodeCoseKey(good);
  assert.deepEqual([...decoded.keys()], [1, 3, -1, -2]);
  assert.equal(decoded.get(3), -8n);
  // a length written longer than it needs to be is still the same value
  assert.equal(decodeCoseKey(new Uint8Array([0xa1, 0x18, 0x01, 0x19, 0x00, 0x02])).get(1), 2n);
  const refused: [string, number[]][] = [
    ["empty", []],
    ["not a map", [0x82, 0x01, 0x02]],
    ["an indefinite map", [0xbf, 0x01, 0x02, 0xff]],
    ["a text label", [0xa1, 0x61, 0x61, 0x01]],
    ["a byte string label", [0xa1, 0x41, 0x00, 0x01]],
    ["a text value", [0xa1, 0x01, 0x61, 0x61]],
    ["a map value", [0xa1, 0x01, 0xa0]],
    ["an array value", [0xa1, 0x01, 0x80]],
    ["a tag", [0xa1, 0x01, 0xc2, 0x41, 0x01]],
    ["a float", [0xa1, 0x01, 0xf9, 0x3c, 0x00]],
    ["true", [0xa1, 0x01, 0xf5]],
    ["a label twice", [0xa2, 0x01, 0x01, 0x01, 0x02]],
    ["a byte after it", [0xa1, 0x01, 0x02, 0x00]],
    ["truncated", [0xa2, 0x01, 0x02]],
    ["a byte string past the end", [0xa1, 0x01, 0x45, 0x00]],
    ["a huge label", [0xa1, 0x1a, 0x00, 0x01, 0x00, 0x00, 0x01]],
    ["reserved additional information", [0xa1, 0x01, 0x1c]],
    ["seventeen entries", [0xb1, ...Array.from({ length: 17 }, (_, i) => [i, 0]).flat()]],
  ];
  for (const [what, bytes] of refused) assert.throws(() => decodeCoseKey(new Uint8Array(bytes)), CoseKeyError, what);
});

test("a COSE_Key becomes a key only for its own algorithm, key type and curve", () => {
  const es = authenticator(-7);
  assert.equal(coseKeyObject(es.cose, -7).asymmetricKeyType, "ec");
  assert.throws(() => coseKeyObject(es.cose, -8), CoseKeyError);
  const ed = authenticator(-8);
  assert.equal(coseKeyObject(ed.cose, -8).asymmetricKeyType, "ed25519");
  const x = decodeCoseKey(es.cose).get(-2) as Uint8Array;
  const y = decodeCoseKey(es.cose).get(-3) as Uint8Array;
  const cases: [string, Uint8Array, CoseAlgorithm][] = [
    ["P-384 under ES256", coseMap([[1, 2], [3, -7], [-1, 2], [-2, x], [-3, y]]), -7],
    ["no y", coseMap([[1, 2], [3, -7], [-1, 1], [-2, x]]), -7],
    ["not on the curve", coseMap([[1, 2], [3, -7], [-1, 1], [-2, x], [-3, x]]), -7],
    ["an EC key type for EdDSA", coseMap([[1, 2], [3, -8], [-1, 6], [-2, new Uint8Array(32)]]), -8],
    ["X25519 for EdDSA", coseMap([[1, 1], [3, -8], [-1, 4], [-2, new Uint8Array(32).fill(9)]]), -8],
    ["an Ed25519 key of 31 bytes", coseMap([[1, 1], [3, -8], [-1, 6], [-2, new Uint8Array(31).fill(9)]]), -8],
    ["an even RSA exponent", coseMap([[1, 3], [3, -257], [-1, new Uint8Array(256).fill(0xc3)], [-2, new Uint8Array([1, 0, 0])]]), -257],
    ["an RSA exponent of 1", coseMap([[1, 3], [3, -257], [-1, new Uint8Array(256).fill(0xc3)], [-2, new Uint8Array([1])]]), -257],
    ["no alg", coseMap([[1, 1], [-1, 6], [-2, new Uint8Array(32)]]), -8],
  ];
  for (const [what, cose, algorithm] of cases) assert.throws(() => coseKeyObject(cose, algorithm), CoseKeyError, what);
  // an RSA modulus with a leading zero byte reads as the same number
  const rsa = authenticator(-257);
  const map = decodeCoseKey(rsa.cose);
  const padded = coseMap([[1, 3], [3, -257], [-1, new Uint8Array([0, ...(map.get(-1) as Uint8Array)])], [-2, map.get(-2) as Uint8Array]]);
  assert.equal(coseKeyObject(padded, -257).asymmetricKeyDetails?.modulusLength, 2048);
});

/** The vectors' keyring as plain JSON (integers as numbers). */
function keyringDoc(): { operators: Record<string, unknown>[] } & Record<string, unknown> {
  return JSON.parse(JSON.stringify(DOC["keyring"], (_, v: unknown) => (typeof v === "bigint" ? Number(v) : v))) as {
    operators: Record<string, unknown>[];
  } & Record<string, unknown>;
}

function keyringText(operators: unknown): string {
  const doc: Record<string, unknown> = keyringDoc();
  if (operators === undefined) delete doc["operators"];
  else doc["operators"] = operators;
  return JSON.stringify(doc);
}

test("the keyring's operators: every entry exactly as the guard writes one, or the keyring is refused", () => {
  assert.equal(KEYRING.operators.size, 4);
  assert.equal(PublicKeyring.parse(keyringText(undefined)).operators.size, 0);
  assert.equal(PublicKeyring.parse(keyringText(null)).operators.size, 0);
  const entry = keyringDoc().operators[0];
  assert.ok(entry !== undefined);
  const withoutStatus = { ...entry };
  delete withoutStatus["status"];
  assert.equal(PublicKeyring.parse(keyringText([withoutStatus])).operators.get(String(entry["credentialId"]))?.status, "active");
  assert.equal(PublicKeyring.parse(keyringText([{ ...entry, removedAtIso: null }])).operators.size, 1);
  const bad: [string, unknown][] = [
    ["not a list", { ...entry }],
    ["not an object", [1]],
    ["an extra member", [{ ...entry, aaguid: "AA" }]],
    ["snake case", [{ ...withoutStatus, credential_id: entry["credentialId"] }]],
    ["listed twice", [entry, entry]],
    ["an unknown algorithm", [{ ...entry, algorithm: -35 }]],
    ["an algorithm as text", [{ ...entry, algorithm: "-7" }]],
    ["a negative sign count", [{ ...entry, signCount: -1 }]],
    ["a sign count of 2^32", [{ ...entry, signCount: 2 ** 32 }]],
    ["a padded credential id", [{ ...entry, credentialId: `${String(entry["credentialId"])}=` }]],
    ["no public key", [{ ...entry, publicKey: undefined }]],
    ["an empty label", [{ ...entry, label: "" }]],
    ["a label of 101 characters", [{ ...entry, label: "x".repeat(101) }]],
    ["an origin with a path", [{ ...entry, origin: `${ORIGIN}/` }]],
    ["an origin of another scheme", [{ ...entry, origin: "file://localhost" }]],
    ["status retired", [{ ...entry, status: "retired" }]],
    ["status null", [{ ...entry, status: null }]],
    ["a bad enrolment time", [{ ...entry, enrolledAtIso: "2026-11-21T12:00:00Z" }]],
    ["a bad removal time", [{ ...entry, removedAtIso: "yesterday" }]],
  ];
  for (const [what, operators] of bad) assert.throws(() => PublicKeyring.parse(keyringText(operators)), KeyringError, what);
  // a sign count written 1.0 is not an integer
  assert.throws(() => PublicKeyring.parse(keyringText([entry]).replace(/"signCount":\s*41/, '"signCount": 41.0')), KeyringError);
  assert.throws(() => new PublicKeyring([], [credential(authenticator(-8), "AA"), credential(authenticator(-8), "AA")]), KeyringError);
});

test("the vectors' keyring is signed over its operators too (JCS of everything but signatures)", () => {
  const doc = loadJson(JSON.stringify(DOC["keyring"], (_, v: unknown) => (typeof v === "bigint" ? Number(v) : v)));
  assert.ok(isJsonObject(doc) && Array.isArray(doc["signatures"]));
  const unsigned: JsonObject = {};
  for (const [key, value] of Object.entries(doc)) if (key !== "signatures") unsigned[key] = value;
  const message = Buffer.concat([Buffer.from("pi-operator-guard/keyring/v1\n"), canonicalBytes(unsigned)]);
  const [signature] = doc["signatures"];
  assert.ok(isJsonObject(signature));
  const key = KEYRING.keys.get(str(signature["keyId"]));
  assert.ok(key !== undefined);
  assert.ok(verify(null, message, key.key, b64UrlBytes(str(signature["signature"])) as Uint8Array));
  delete unsigned["operators"];
  const without = Buffer.concat([Buffer.from("pi-operator-guard/keyring/v1\n"), canonicalBytes(unsigned)]);
  assert.ok(!verify(null, without, key.key, b64UrlBytes(str(signature["signature"])) as Uint8Array));
});
