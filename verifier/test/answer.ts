/**
 * Answer arbitrary cases on stdin, for differential tests against the Python side
 * (tests/verifier/test_differential.py):
 *
 *     {"keyring": {...}, "cases": [{"type": "checkpoint" | "proof" | "envelope", ...vector fields}
 *                                  | {"type": "log", "logBase64", "headBase64" (or null), "keyring"}]}
 *
 * prints `[{"decision", "reasons"}, ...]` (a log: `verifyLog`'s whole result), one per case.
 */

import { readFileSync } from "node:fs";

import { isJsonObject, loadJson } from "../src/json.ts";
import { verifyLog } from "../src/log.ts";
import { checkpointOutcome, envelopeKeyring, envelopeOutcome, list, proofOutcome, str } from "./vectors.ts";

const doc = loadJson(readFileSync(0), { maxBytes: 256 << 20 });
if (!isJsonObject(doc)) throw new Error("expected an object");
const keyring = envelopeKeyring(doc);
const answers = list(doc["cases"]).map((c) => {
  switch (str(c["type"])) {
    case "checkpoint":
      return checkpointOutcome(c);
    case "proof":
      return proofOutcome(c);
    case "envelope":
      return envelopeOutcome(c, keyring);
    case "log": {
      const head = c["headBase64"];
      const result = verifyLog(
        Buffer.from(str(c["logBase64"]), "base64"),
        typeof head === "string" ? Buffer.from(head, "base64") : null,
        (origin) => envelopeKeyring(c).noteKeys(origin),
        typeof c["againstBase64"] === "string" ? Buffer.from(c["againstBase64"], "base64") : null,
      );
      return { ...result, lastSeq: result.lastSeq === null ? null : Number(result.lastSeq), headSeq: result.headSeq === null ? null : Number(result.headSeq), againstSize: result.againstSize === null ? null : Number(result.againstSize) };
    }
    default:
      throw new Error("unknown case type");
  }
});
process.stdout.write(`${JSON.stringify(answers)}\n`);
