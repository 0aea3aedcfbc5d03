/**
 * One audit record line (without its LF), checked as the Python side's `check_body` does:
 * a JSON object with exactly `seq`, `ts`, `event`, `data`, `prev`, `hash` of the right types,
 * in RFC 8785 canonical form, whose `hash` is `sha256:` + hex SHA-256 of the line without its
 * `"hash"` member. Faults, as the Python `LineFault` kinds: `malformed-line`, `hash-mismatch`.
 */

import { createHash } from "node:crypto";

import { CanonicalizationError, canonicalize } from "./jcs.ts";
import { type JsonObject, type JsonValue, JsonInputError, isJsonObject, loadJson } from "./json.ts";

const KEYS = ["data", "event", "hash", "prev", "seq", "ts"];
const ISO = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$/;
const HASH_MARK = Buffer.from(',"hash":"', "utf8");

export class RecordFault extends Error {
  readonly kind: string;
  constructor(kind: string, detail: string) {
    super(`${kind}: ${detail}`);
    this.kind = kind;
  }
}

/** The parsed record of a line that passes every check; throws {@link RecordFault}. */
export function checkRecordLine(line: string): JsonObject {
  const body = Buffer.from(line, "utf8");
  let rec: JsonValue;
  try {
    rec = loadJson(body);
  } catch (exc) {
    if (exc instanceof JsonInputError) throw new RecordFault("malformed-line", "not valid UTF-8 JSON");
    throw exc;
  }
  if (!isJsonObject(rec) || Object.keys(rec).sort().join() !== KEYS.join()) {
    throw new RecordFault("malformed-line", "not an object with exactly seq, ts, event, data, prev, hash");
  }
  const { seq, ts, event, data, prev, hash } = rec;
  if (
    typeof seq !== "bigint" ||
    seq < 0n ||
    typeof ts !== "string" ||
    !ISO.test(ts) ||
    typeof event !== "string" ||
    event === "" ||
    !isJsonObject(data) ||
    typeof prev !== "string" ||
    typeof hash !== "string"
  ) {
    throw new RecordFault("malformed-line", "a field has the wrong type or form");
  }
  let canon: string;
  try {
    canon = canonicalize(rec);
  } catch (exc) {
    if (exc instanceof CanonicalizationError) throw new RecordFault("malformed-line", `no canonical form (${exc.code})`);
    throw exc;
  }
  if (canon !== line) throw new RecordFault("malformed-line", "not in canonical JSON form");
  const start = body.lastIndexOf(HASH_MARK);
  const value = Buffer.from(hash, "utf8");
  const end = start + HASH_MARK.length + value.length;
  if (start < 0 || !body.subarray(start + HASH_MARK.length, end).equals(value) || body[end] !== 0x22) {
    throw new RecordFault("hash-mismatch", "the hash field is not a sha256 value");
  }
  const unhashed = Buffer.concat([body.subarray(0, start), body.subarray(end + 1)]);
  if (`sha256:${createHash("sha256").update(unhashed).digest("hex")}` !== hash) {
    throw new RecordFault("hash-mismatch", "the stored hash does not match the record");
  }
  return rec;
}
