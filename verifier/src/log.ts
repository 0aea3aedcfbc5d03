/**
 * A whole audit log against its signed head, as `pi-guard audit verify` checks it (the guide,
 * "Verifying"), for logs whose head is a checkpoint: every line LF-terminated and a well-formed
 * record with its own hash right (`torn-line`, `malformed-line`, `hash-mismatch`), `seq` from 0
 * without gaps (`seq-mismatch`), record 0 a `log.created` whose log id seeds the chain
 * (`genesis-invalid`), each `prev` the previous `hash` (`prev-mismatch`); then the head — a
 * C2SP checkpoint signed by a trusted key, of this log (`head-missing`, `head-malformed`,
 * `head-unknown-key`, `head-signature-invalid`, `head-origin-mismatch`) — names exactly as
 * many records as there are (`records-missing-at-end`, `records-after-head`) and their Merkle
 * root (`root-mismatch`). With an earlier signed checkpoint (`against`, an anchored one), the
 * log must extend it: `checkpoint-untrusted` (it does not verify, or is of another log),
 * `rolled-back` (the log is shorter now), `checkpoint-fork` (its first records hash to another
 * root). The first fault decides; `line` is 1-based. Not covered: a pre-checkpoint JSON head.
 */

import { createHash } from "node:crypto";

import { b64StdEncode } from "./base64.ts";
import { type JsonObject, isJsonObject } from "./json.ts";
import { leafHash, rootOf } from "./merkle.ts";
import { type Checkpoint, type NoteKeys, NoteError, ORIGIN_PREFIX, openCheckpoint } from "./note.ts";
import { RecordFault, checkRecordLine } from "./record.ts";

const MAX_HEAD_BYTES = 64 * 1024;
const GENESIS_DOMAIN = "pi-operator-guard/audit-genesis/v1\n";
const LOG_ID = /^log_[A-Za-z0-9_-]{16,200}$/;

export interface LogResult {
  decision: "intact" | "tampered" | "unanchored";
  fault: string | null;
  line: number | null;
  reasons: string[];
  records: number;
  logId: string | null;
  lastSeq: bigint | null;
  lastHash: string | null;
  headSeq: bigint | null;
  /** The Merkle tree of the records, when every line checked out (`null` after a line fault). */
  treeSize: number | null;
  root: string | null;
  againstSize: bigint | null;
}

type Fault = [kind: string, line: number | null];

function genesisHash(logId: string): string {
  return `sha256:${createHash("sha256").update(GENESIS_DOMAIN + logId, "utf8").digest("hex")}`;
}

function logIdOf(data: JsonObject): string | null {
  const keys = Object.keys(data).sort().join();
  const { logId, schema } = data;
  if (keys !== "logId,schema" || schema !== "pi-operator-guard/audit/v1") return null;
  return typeof logId === "string" && LOG_ID.test(logId) ? logId : null;
}

function readHead(raw: Uint8Array | null, keys: NoteKeys, origin: string | null): Checkpoint | Fault {
  if (raw === null) return ["head-missing", null];
  if (raw.length > MAX_HEAD_BYTES) return ["head-malformed", null];
  if (raw[0] === 0x7b) return ["head-malformed", null]; // a pre-checkpoint JSON head: not covered
  try {
    const { checkpoint } = openCheckpoint(raw, keys, origin === null ? {} : { origin });
    if (!checkpoint.origin.startsWith(ORIGIN_PREFIX)) return ["head-origin-mismatch", null];
    if (checkpoint.size === 0n) return ["head-malformed", null];
    return checkpoint;
  } catch (exc) {
    if (!(exc instanceof NoteError)) throw exc;
    const kind =
      { "no-trusted-signature": "head-unknown-key", "signature-invalid": "head-signature-invalid", "origin-mismatch": "head-origin-mismatch" }[exc.code] ??
      "head-malformed";
    return [kind, null];
  }
}

/** Verify the bytes of a log and of its head file (`null`: there is none). */
export function verifyLog(log: Uint8Array, head: Uint8Array | null, keys: NoteKeys, against: Uint8Array | null = null): LogResult {
  let anchor: Checkpoint | null = null;
  let anchorFault: Fault | null = null;
  if (against !== null) {
    try {
      anchor = openCheckpoint(against, keys).checkpoint;
    } catch (exc) {
      if (!(exc instanceof NoteError)) throw exc;
      anchorFault = ["checkpoint-untrusted", null];
    }
  }
  let markRoot: Uint8Array | null = anchor !== null && anchor.size === 0n ? rootOf([]) : null;
  const data = Buffer.from(log);
  const leaves: Uint8Array[] = [];
  let fault: Fault | null = null;
  let lineNo = 0;
  let logId: string | null = null;
  let prev: string | null = null;
  let nextSeq = 0n;
  let start = 0;
  while (start < data.length) {
    lineNo++;
    const end = data.indexOf(0x0a, start);
    try {
      if (end < 0) throw new RecordFault("torn-line", "the last line has no line feed");
      const body = data.subarray(start, end);
      let text: string;
      try {
        text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(body);
      } catch {
        throw new RecordFault("malformed-line", "not valid UTF-8 JSON");
      }
      const rec = checkRecordLine(text);
      if (rec["seq"] !== nextSeq) throw new RecordFault("seq-mismatch", `expected seq ${nextSeq}`);
      if (prev === null) {
        if (rec["event"] !== "log.created") throw new RecordFault("genesis-invalid", "record 0 is not a log.created event");
        const id = isJsonObject(rec["data"]) ? logIdOf(rec["data"]) : null;
        if (id === null) throw new RecordFault("genesis-invalid", "record 0 has invalid log.created data");
        logId = id;
        if (rec["prev"] !== genesisHash(id)) throw new RecordFault("prev-mismatch", "record 0 does not chain from its log id");
      } else if (rec["prev"] !== prev) {
        throw new RecordFault("prev-mismatch", "prev is not the hash of the record before");
      }
      prev = rec["hash"] as string;
      nextSeq++;
      leaves.push(leafHash(body));
      if (anchor !== null && BigInt(leaves.length) === anchor.size) markRoot = rootOf(leaves);
    } catch (exc) {
      if (!(exc instanceof RecordFault)) throw exc;
      fault = [exc.kind, lineNo];
      break;
    }
    start = end + 1;
  }
  const lastLine = fault === null ? lineNo : lineNo - 1;
  const lastSeq = nextSeq > 0n ? nextSeq - 1n : null;
  const root = rootOf(leaves);
  const origin = logId === null ? null : ORIGIN_PREFIX + logId;
  const opened = readHead(head, keys, origin);
  const headFault = Array.isArray(opened) ? opened : null;
  const checkpoint = Array.isArray(opened) ? null : opened;
  const lineFault = fault !== null;
  const reasons: string[] = fault === null ? [] : [fault[0]];
  if (headFault !== null) reasons.push(headFault[0]);
  if (fault === null && checkpoint !== null) {
    const headSeq = checkpoint.size - 1n;
    if (lastSeq === null || headSeq > lastSeq) fault = ["records-missing-at-end", lastLine + 1];
    else if (headSeq < lastSeq) fault = ["records-after-head", Number(headSeq) + 2];
    else if (!Buffer.from(checkpoint.root).equals(Buffer.from(root))) fault = ["root-mismatch", null];
    if (fault !== null) reasons.push(fault[0]);
  }
  // An earlier checkpoint is judged before a missing head: a log cut back behind it is tampered.
  if (fault === null && anchorFault !== null) {
    fault = anchorFault;
    reasons.push(fault[0]);
  }
  if (fault === null && anchor !== null) {
    if (origin !== null && anchor.origin !== origin) fault = ["checkpoint-untrusted", null];
    else if (BigInt(leaves.length) < anchor.size) fault = ["rolled-back", null];
    else if (markRoot === null || !Buffer.from(markRoot).equals(Buffer.from(anchor.root))) fault = ["checkpoint-fork", null];
    if (fault !== null) reasons.push(fault[0]);
  }
  if (fault === null) fault = headFault;
  const decision = fault === null ? "intact" : fault[0] === "head-missing" ? "unanchored" : "tampered";
  return {
    decision,
    fault: fault === null ? null : fault[0],
    line: fault === null ? null : fault[1],
    reasons,
    records: leaves.length,
    logId,
    lastSeq,
    lastHash: prev,
    headSeq: checkpoint === null ? null : checkpoint.size - 1n,
    treeSize: lineFault ? null : leaves.length,
    root: lineFault ? null : b64StdEncode(root),
    againstSize: anchor === null ? null : anchor.size,
  };
}
