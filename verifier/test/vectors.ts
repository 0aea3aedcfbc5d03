/**
 * Shared vectors (tests/vectors/ at the repository root) and what this verifier says of each, in
 * the `{decision, reasons}` form the vectors state (the operator vectors add `operatorSignature`).
 * The node tests assert them; with `VERIFIER_RESULTS=FILE` the vector test also writes every
 * answer to FILE, so the Python test suite can compare them with the Python implementation's,
 * vector by vector.
 */

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { type EnvelopeResult, verifyEnvelope } from "../src/envelope.ts";
import { type JsonObject, type JsonValue, isJsonObject, loadJson } from "../src/json.ts";
import { PublicKeyring } from "../src/keyring.ts";
import { NoteError, NoteKey, openCheckpoint } from "../src/note.ts";
import { verifyProofFile } from "../src/proof.ts";
import { parseIsoMillis } from "../src/time.ts";

export const VECTORS = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "tests", "vectors");

export interface Outcome {
  decision: string;
  reasons: string[];
  /** Only in the operator vectors: `"verified"` or `"none"` on a match, `null` otherwise. */
  operatorSignature?: string | null;
}

export function loadVectors(...path: string[]): JsonObject {
  const doc = loadJson(readFileSync(join(VECTORS, ...path)), { maxBytes: 64 << 20 });
  if (!isJsonObject(doc)) throw new Error(`${path.join("/")} is not an object`);
  return doc;
}

export function list(value: JsonValue | undefined): JsonObject[] {
  if (!Array.isArray(value) || !value.every(isJsonObject)) throw new Error("not a list of objects");
  return value;
}

export function str(value: JsonValue | undefined): string {
  if (typeof value !== "string") throw new Error("not a string");
  return value;
}

export function strings(value: JsonValue | undefined): string[] {
  if (!Array.isArray(value)) throw new Error("not a list");
  return value.map(str);
}

function num(value: JsonValue | undefined): number {
  if (typeof value !== "bigint") throw new Error("not an integer");
  return Number(value);
}

export function expected(vector: JsonObject): Outcome {
  const want = vector["expected"];
  if (!isJsonObject(want)) throw new Error("no expected outcome");
  const outcome: Outcome = { decision: str(want["decision"]), reasons: strings(want["reasons"]) };
  const signed = want["operatorSignature"];
  if (signed !== undefined) outcome.operatorSignature = signed === null ? null : str(signed);
  return outcome;
}

function noteKeys(vector: JsonObject): NoteKey[] {
  return strings(vector["keys"]).map((vkey) => NoteKey.fromVkey(vkey));
}

export function checkpointOutcome(vector: JsonObject): Outcome {
  try {
    const keys = noteKeys(vector);
    const note =
      vector["noteBase64"] !== undefined ? new Uint8Array(Buffer.from(str(vector["noteBase64"]), "base64")) : str(vector["note"]);
    const origin = vector["origin"];
    openCheckpoint(note, keys, origin === undefined ? {} : { origin: str(origin) });
  } catch (exc) {
    if (exc instanceof NoteError) return { decision: "rejected", reasons: [exc.code] };
    throw exc;
  }
  return { decision: "verified", reasons: [] };
}

export function proofOutcome(vector: JsonObject): Outcome {
  let keys: NoteKey[];
  try {
    keys = noteKeys(vector);
  } catch (exc) {
    if (exc instanceof NoteError) return { decision: "rejected", reasons: [exc.code] };
    throw exc;
  }
  const result = verifyProofFile(str(vector["file"]), keys);
  return { decision: result.decision, reasons: result.reasons };
}

export function envelopeOutcome(vector: JsonObject, keyring: PublicKeyring): Outcome {
  const result = verifyVector(vector, keyring);
  return { decision: result.decision, reasons: result.reasons };
}

function verifyVector(vector: JsonObject, keyring: PublicKeyring): EnvelopeResult {
  const now = parseIsoMillis(str(vector["now"]));
  if (now === null) throw new Error("bad now");
  const raw = vector["envelopeBase64"] !== undefined ? new Uint8Array(Buffer.from(str(vector["envelopeBase64"]), "base64")) : str(vector["envelope"]);
  const origins = vector["trustedOrigins"];
  const call = vector["toolCallId"];
  const result = verifyEnvelope(raw, {
    keyring,
    now,
    skewSeconds: num(vector["skewSeconds"]),
    maxTtlSeconds: num(vector["maxTtlSeconds"]),
    ...(origins === undefined ? {} : { trustedOrigins: strings(origins) }),
    ...(call === undefined ? {} : { toolCallId: str(call) }),
    callCheckedElsewhere: vector["callCheckedElsewhere"] === true,
    requireDialog: vector["requireDialog"] === true,
    requireOperatorSignature: vector["requireOperatorSignature"] === true,
  });
  return result;
}

export function envelopeKeyring(doc: JsonObject): PublicKeyring {
  return PublicKeyring.parse(JSON.stringify(doc["keyring"], (_, v: unknown) => (typeof v === "bigint" ? Number(v) : v)));
}

/** An operator vector (operator/envelopes.json): its own `keyring` if it has one, else the file's. */
export function operatorOutcome(vector: JsonObject, doc: JsonObject): Outcome {
  const keyring = envelopeKeyring(vector["keyring"] !== undefined ? vector : doc);
  const result = verifyVector(vector, keyring);
  return { decision: result.decision, reasons: result.reasons, operatorSignature: result.operatorSignature };
}
