/** Every shared vector through this verifier: the outcome each states, and a count of them. */

import { strict as assert } from "node:assert";
import { existsSync, writeFileSync } from "node:fs";
import { after, describe, test } from "node:test";

import {
  type Outcome,
  checkpointOutcome,
  envelopeKeyring,
  envelopeOutcome,
  expected,
  list,
  loadVectors,
  operatorOutcome,
  proofOutcome,
  str,
  VECTORS,
} from "./vectors.ts";
import { join } from "node:path";

const results: Record<string, Record<string, Outcome>> = {};

function run(file: string, vectors: ReturnType<typeof list>, outcome: (v: (typeof vectors)[number]) => Outcome): void {
  const answers: Record<string, Outcome> = {};
  results[file] = answers;
  describe(file, () => {
    assert.ok(vectors.length > 0, `${file} has no vectors`);
    for (const vector of vectors) {
      const id = str(vector["id"]);
      test(id, () => {
        const got = outcome(vector);
        answers[id] = got;
        assert.deepEqual(got, expected(vector));
      });
    }
  });
}

run("tlog/checkpoints.json", list(loadVectors("tlog", "checkpoints.json")["vectors"]), checkpointOutcome);
run("tlog/proofs.json", list(loadVectors("tlog", "proofs.json")["vectors"]), proofOutcome);
if (existsSync(join(VECTORS, "evidence", "envelopes.json"))) {
  const doc = loadVectors("evidence", "envelopes.json");
  const keyring = envelopeKeyring(doc);
  run("evidence/envelopes.json", list(doc["vectors"]), (v) => envelopeOutcome(v, keyring));
}
if (existsSync(join(VECTORS, "operator", "envelopes.json"))) {
  const doc = loadVectors("operator", "envelopes.json");
  run("operator/envelopes.json", list(doc["vectors"]), (v) => operatorOutcome(v, doc));
}

after(() => {
  const path = process.env["VERIFIER_RESULTS"];
  if (path !== undefined && path !== "") writeFileSync(path, `${JSON.stringify(results, null, 1)}\n`);
});
