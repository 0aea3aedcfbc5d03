/**
 * Answer arbitrary cases on stdin, for differential tests against the Python side
 * (tests/verifier/test_differential.py):
 *
 *     {"keyring": {...}, "cases": [{"type": "checkpoint" | "proof" | "envelope", ...vector fields}]}
 *
 * prints `[{"decision", "reasons"}, ...]`, one per case, in order.
 */

import { readFileSync } from "node:fs";

import { isJsonObject, loadJson } from "../src/json.ts";
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
    default:
      throw new Error("unknown case type");
  }
});
process.stdout.write(`${JSON.stringify(answers)}\n`);
