/**
 * Proof files (`pi-operator-guard/proof/v1`): an inclusion proof of audit records in a signed
 * checkpoint, or a consistency proof between two signed checkpoints of one log.
 *
 *     {"schema": "pi-operator-guard/proof/v1", "kind": "inclusion", "checkpoint": "<signed note>",
 *      "entries": [{"leafIndex": 5, "line": "<record line without LF>", "hashes": ["<base64>", ...]}]}
 *     {"schema": "pi-operator-guard/proof/v1", "kind": "consistency",
 *      "old": "<signed note, size m>", "new": "<signed note, size n>", "hashes": ["<base64>", ...]}
 *
 * An inclusion entry verifies iff leafIndex < tree size, RFC 9162 2.1.3.2 over its hashes from
 * SHA-256(0x00 || UTF-8(line)) gives the checkpoint's root, and the line is a JSON record whose
 * `seq` is leafIndex. A consistency proof verifies iff both notes verify, are of the same log,
 * and RFC 9162 2.1.4.2 holds (1 <= m <= n). Every checkpoint must verify with the given keys.
 */

import { b64StdDecode } from "./base64.ts";
import { type JsonObject, type JsonValue, JsonInputError, isJsonObject, loadJson } from "./json.ts";
import { ProofError, leafHash, verifyConsistency, verifyInclusion } from "./merkle.ts";
import { type NoteKeys, NoteError, openCheckpoint } from "./note.ts";

export const PROOF_SCHEMA = "pi-operator-guard/proof/v1";
export const MAX_PROOF_BYTES = 16 * 1024 * 1024;
const MAX_HASHES = 64;

export interface ProofResult {
  decision: "verified" | "rejected";
  reasons: string[];
  kind: "inclusion" | "consistency" | null;
  origin: string | null;
  /** The (new) checkpoint's tree size, as a decimal string. */
  size: string | null;
  /** Leaf indices proven included (inclusion proofs). */
  leafIndices: string[];
}

function malformed(detail: string): never {
  throw new ProofError("proof-malformed", detail);
}

function exactKeys(obj: JsonObject, keys: readonly string[], where: string): void {
  const have = Object.keys(obj).sort();
  const want = [...keys].sort();
  if (have.length !== want.length || have.some((k, i) => k !== want[i])) malformed(`${where} must have exactly ${want.join(", ")}`);
}

function hashes(value: JsonValue | undefined, where: string): Uint8Array[] {
  if (!Array.isArray(value) || value.length > MAX_HASHES) malformed(`${where} is not a list of at most ${MAX_HASHES} hashes`);
  return value.map((item) => {
    const raw = typeof item === "string" ? b64StdDecode(item) : null;
    if (raw === null || raw.length !== 32) malformed(`${where} holds something that is not a base64 32-byte hash`);
    return raw;
  });
}

function text(value: JsonValue | undefined, where: string): string {
  if (typeof value !== "string" || !value.isWellFormed()) malformed(`${where} is not a string`);
  return value;
}

function leafIndex(value: JsonValue | undefined): bigint {
  if (typeof value !== "bigint" || value < 0n) malformed("leafIndex is not a non-negative integer");
  return value;
}

function seqOf(line: string): JsonValue | undefined {
  try {
    const record = loadJson(line);
    return isJsonObject(record) ? record["seq"] : undefined;
  } catch (exc) {
    if (exc instanceof JsonInputError) return undefined;
    throw exc;
  }
}

/** Verify a proof file's text or bytes with the log's verifier keys; never throws for any input. */
export function verifyProofFile(data: Uint8Array | string, keys: NoteKeys): ProofResult {
  const out: ProofResult = { decision: "rejected", reasons: [], kind: null, origin: null, size: null, leafIndices: [] };
  try {
    let doc: JsonValue;
    try {
      doc = loadJson(data, { maxBytes: MAX_PROOF_BYTES });
    } catch (exc) {
      if (exc instanceof JsonInputError) malformed(exc.message);
      throw exc;
    }
    if (!isJsonObject(doc) || doc["schema"] !== PROOF_SCHEMA) malformed("not a pi-operator-guard/proof/v1 file");
    if (doc["kind"] === "inclusion") {
      out.kind = "inclusion";
      exactKeys(doc, ["schema", "kind", "checkpoint", "entries"], "an inclusion proof");
      const note = text(doc["checkpoint"], "checkpoint");
      const entries = doc["entries"];
      if (!Array.isArray(entries) || entries.length === 0) malformed("entries is not a non-empty list");
      const signed = openCheckpoint(note, keys);
      out.origin = signed.checkpoint.origin;
      out.size = signed.checkpoint.size.toString();
      for (const entry of entries) {
        if (!isJsonObject(entry)) malformed("an entry is not an object");
        exactKeys(entry, ["leafIndex", "line", "hashes"], "an entry");
        const index = leafIndex(entry["leafIndex"]);
        const line = text(entry["line"], "line");
        const path = hashes(entry["hashes"], "hashes");
        const leaf = leafHash(new Uint8Array(Buffer.from(line, "utf8")));
        verifyInclusion(index, signed.checkpoint.size, leaf, path, signed.checkpoint.root);
        if (seqOf(line) !== index) throw new ProofError("leaf-mismatch", "the record's seq is not its leaf index");
        out.leafIndices.push(index.toString());
      }
    } else if (doc["kind"] === "consistency") {
      out.kind = "consistency";
      exactKeys(doc, ["schema", "kind", "old", "new", "hashes"], "a consistency proof");
      const oldNote = text(doc["old"], "old");
      const newNote = text(doc["new"], "new");
      const path = hashes(doc["hashes"], "hashes");
      const older = openCheckpoint(oldNote, keys);
      const newer = openCheckpoint(newNote, keys, { origin: older.checkpoint.origin });
      out.origin = newer.checkpoint.origin;
      out.size = newer.checkpoint.size.toString();
      verifyConsistency(older.checkpoint.size, newer.checkpoint.size, older.checkpoint.root, newer.checkpoint.root, path);
    } else {
      malformed("kind is neither inclusion nor consistency");
    }
  } catch (exc) {
    if (exc instanceof ProofError || exc instanceof NoteError) {
      out.reasons = [exc.code];
      out.leafIndices = [];
      return out;
    }
    throw exc;
  }
  out.decision = "verified";
  return out;
}
