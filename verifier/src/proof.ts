/**
 * Proof files (`pi-operator-guard/proof/v1`), checked as the Python side's `audit.tlog.verify_proof`:
 *
 *     {"schema": "pi-operator-guard/proof/v1", "kind": "inclusion", "checkpoint": "<signed note>",
 *      "entries": [{"leafIndex": 5, "line": "<record line without LF>", "hashes": ["<base64>", ...]}]}
 *     {"schema": "pi-operator-guard/proof/v1", "kind": "consistency",
 *      "old": "<signed note, size m>", "new": "<signed note, size n>", "hashes": ["<base64>", ...]}
 *
 * A file that is not a proof file at all is `malformed` (the JSON refusal codes, or
 * `proof-malformed`). Otherwise the checkpoint(s) must verify with the given keys (the note's
 * reason code if not); then, for an inclusion proof, every entry is checked — the line is a
 * well-formed record with its own hash right (`record-malformed-line`, `record-hash-mismatch`),
 * its `seq` is its leaf index (`leaf-mismatch`), its hashes are canonical base64 of 32 bytes
 * (`proof-malformed`), and RFC 9162 2.1.3.2 leads from SHA-256(0x00 || line) to the root — and
 * the reasons of all failing entries are listed (each once); for a consistency proof, the old
 * checkpoint must be of the new one's log and RFC 9162 2.1.4.2 must hold (1 <= m <= n).
 */

import { b64StdDecode } from "./base64.ts";
import { type JsonObject, type JsonValue, JsonInputError, isJsonObject, loadJson } from "./json.ts";
import { ProofError, leafHash, verifyConsistency, verifyInclusion } from "./merkle.ts";
import { MAX_NOTE_BYTES, type NoteKeys, NoteError, type SignedCheckpoint, openCheckpoint } from "./note.ts";
import { RecordFault, checkRecordLine } from "./record.ts";

export const PROOF_SCHEMA = "pi-operator-guard/proof/v1";
export const MAX_PROOF_BYTES = 16 * 1024 * 1024;
const MAX_LINE_CHARS = 256 * 1024;
const MAX_ENTRIES = 10_000;
const TWO_63 = 1n << 63n;

export interface EntryResult {
  leafIndex: bigint;
  valid: boolean;
  reason: string | null;
  event: string | null;
  evidenceId: string | null;
}

export interface ProofResult {
  /** `valid` only if the signature(s) and every proof hold; `malformed`: not a proof file. */
  decision: "valid" | "invalid" | "malformed";
  kind: "inclusion" | "consistency" | null;
  reasons: string[];
  origin: string | null;
  /** The (new) checkpoint's tree size. */
  treeSize: bigint | null;
  oldSize: bigint | null;
  entries: EntryResult[];
}

class Malformed extends Error {
  readonly code: string;
  constructor(code: string, detail: string) {
    super(`${code}: ${detail}`);
    this.code = code;
  }
}

function malformed(detail: string): never {
  throw new Malformed("proof-malformed", detail);
}

function chars(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

function exactKeys(obj: JsonObject, keys: readonly string[], where: string): void {
  const have = Object.keys(obj).sort().join();
  if (have !== [...keys].sort().join()) malformed(`${where} must have exactly ${keys.join(", ")}`);
}

function text(value: JsonValue | undefined, max: number, where: string): string {
  if (typeof value !== "string" || !value.isWellFormed() || chars(value) > max) malformed(`${where} is not a string of at most ${max} characters`);
  return value;
}

function strings(value: JsonValue | undefined, max: number, where: string): string[] {
  if (!Array.isArray(value) || value.length > max || !value.every((v) => typeof v === "string" && v.isWellFormed())) {
    malformed(`${where} is not a list of at most ${max} strings`);
  }
  return value as string[];
}

function hash(value: string): Uint8Array {
  const raw = b64StdDecode(value);
  if (raw === null || raw.length !== 32) throw new ProofError("proof-malformed", "a hash is not 32 bytes in canonical base64");
  return raw;
}

interface Entry {
  leafIndex: bigint;
  line: string;
  hashes: string[];
}

/** The file's shape, as the pydantic models have it; throws {@link Malformed}. */
function parse(data: Uint8Array | string): { kind: "inclusion"; note: string; entries: Entry[] } | { kind: "consistency"; old: string; new: string; hashes: string[] } {
  let doc: JsonValue;
  try {
    doc = loadJson(data, { maxBytes: MAX_PROOF_BYTES });
  } catch (exc) {
    if (exc instanceof JsonInputError) throw new Malformed(exc.code, exc.message);
    throw exc;
  }
  const kind = isJsonObject(doc) ? doc["kind"] : undefined;
  if (!isJsonObject(doc) || (kind !== "inclusion" && kind !== "consistency")) {
    malformed('not a proof file ("kind" is not inclusion/consistency)');
  }
  if (doc["schema"] !== PROOF_SCHEMA) malformed("schema is not pi-operator-guard/proof/v1");
  if (kind === "inclusion") {
    exactKeys(doc, ["schema", "kind", "checkpoint", "entries"], "an inclusion proof");
    const note = text(doc["checkpoint"], MAX_NOTE_BYTES, "checkpoint");
    const entries = doc["entries"];
    if (!Array.isArray(entries) || entries.length < 1 || entries.length > MAX_ENTRIES) {
      malformed(`entries is not a list of 1 to ${MAX_ENTRIES}`);
    }
    return {
      kind,
      note,
      entries: entries.map((entry) => {
        if (!isJsonObject(entry)) malformed("an entry is not an object");
        exactKeys(entry, ["leafIndex", "line", "hashes"], "an entry");
        const index = entry["leafIndex"];
        if (typeof index !== "bigint" || index < 0n || index >= TWO_63) malformed("leafIndex is not an integer in [0, 2**63)");
        return { leafIndex: index, line: text(entry["line"], MAX_LINE_CHARS, "line"), hashes: strings(entry["hashes"], 64, "hashes") };
      }),
    };
  }
  exactKeys(doc, ["schema", "kind", "old", "new", "hashes"], "a consistency proof");
  return {
    kind,
    old: text(doc["old"], MAX_NOTE_BYTES, "old"),
    new: text(doc["new"], MAX_NOTE_BYTES, "new"),
    hashes: strings(doc["hashes"], 128, "hashes"),
  };
}

function code(exc: unknown): string {
  if (exc instanceof NoteError || exc instanceof ProofError) return exc.code;
  if (exc instanceof RecordFault) return `record-${exc.kind}`;
  throw exc;
}

/** Verify a proof file's text or bytes with the log's verifier keys; never throws for any input. */
export function verifyProofFile(data: Uint8Array | string, keys: NoteKeys): ProofResult {
  const out: ProofResult = { decision: "invalid", kind: null, reasons: [], origin: null, treeSize: null, oldSize: null, entries: [] };
  let file: ReturnType<typeof parse>;
  try {
    file = parse(data);
  } catch (exc) {
    if (!(exc instanceof Malformed)) throw exc;
    return { ...out, decision: "malformed", reasons: [exc.code] };
  }
  out.kind = file.kind;
  if (file.kind === "inclusion") {
    let signed: SignedCheckpoint;
    try {
      signed = openCheckpoint(file.note, keys);
    } catch (exc) {
      return { ...out, reasons: [code(exc)] };
    }
    const { origin, size, root } = signed.checkpoint;
    const reasons: string[] = [];
    for (const entry of file.entries) {
      let reason: string | null = null;
      let event: string | null = null;
      let evidenceId: string | null = null;
      try {
        const rec = checkRecordLine(entry.line);
        event = rec["event"] as string;
        const data = rec["data"] as JsonObject;
        evidenceId = typeof data["evidenceId"] === "string" ? data["evidenceId"] : null;
        if (rec["seq"] !== entry.leafIndex) throw new ProofError("leaf-mismatch", "the record's seq is not its leaf index");
        const path = entry.hashes.map(hash);
        verifyInclusion(entry.leafIndex, size, leafHash(new Uint8Array(Buffer.from(entry.line, "utf8"))), path, root);
      } catch (exc) {
        reason = code(exc);
        reasons.push(reason);
      }
      out.entries.push({ leafIndex: entry.leafIndex, valid: reason === null, reason, event, evidenceId });
    }
    return { ...out, decision: reasons.length === 0 ? "valid" : "invalid", reasons: [...new Set(reasons)], origin, treeSize: size };
  }
  let older: SignedCheckpoint;
  let newer: SignedCheckpoint;
  try {
    newer = openCheckpoint(file.new, keys);
    older = openCheckpoint(file.old, keys, { origin: newer.checkpoint.origin });
  } catch (exc) {
    return { ...out, reasons: [code(exc)] };
  }
  const meta = { origin: newer.checkpoint.origin, treeSize: newer.checkpoint.size, oldSize: older.checkpoint.size };
  try {
    const path = file.hashes.map(hash);
    verifyConsistency(older.checkpoint.size, newer.checkpoint.size, older.checkpoint.root, newer.checkpoint.root, path);
  } catch (exc) {
    return { ...out, ...meta, reasons: [code(exc)] };
  }
  return { ...out, ...meta, decision: "valid" };
}
