/** RFC 6962 / RFC 9162 vectors from transparency-dev/merkle (tests/vectors/tlog/merkle-rfc6962.json). */

import { strict as assert } from "node:assert";
import { test } from "node:test";

import { EMPTY_ROOT, ProofError, leafHash, nodeHash, rootOf, verifyConsistency, verifyInclusion } from "../src/merkle.ts";
import { hex } from "../src/base64.ts";
import { isJsonObject } from "../src/json.ts";
import { list, loadVectors, str, strings } from "./vectors.ts";

const MERKLE = loadVectors("tlog", "merkle-rfc6962.json");
const bytes = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, "hex"));

function ok(check: () => void): boolean {
  try {
    check();
  } catch (exc) {
    if (exc instanceof ProofError) return false;
    throw exc;
  }
  return true;
}

function big(value: unknown): bigint {
  if (typeof value !== "bigint") throw new Error("not an integer");
  return value;
}

test("RFC 6962 hasher known answers", () => {
  const known = MERKLE["hasher"];
  assert.ok(isJsonObject(known));
  assert.equal(hex(EMPTY_ROOT), str(known["emptyRoot"]));
  assert.equal(hex(leafHash(new Uint8Array())), str(known["emptyLeafHash"]));
  const leaf = known["leafHash"];
  const node = known["nodeHash"];
  assert.ok(isJsonObject(leaf) && isJsonObject(node));
  assert.equal(hex(leafHash(bytes(str(leaf["leafHex"])))), str(leaf["hash"]));
  assert.equal(hex(nodeHash(bytes(str(node["leftHex"])), bytes(str(node["rightHex"])))), str(node["hash"]));
});

test("the reference tree: leaf hashes and the root of every size 0..8", () => {
  const tree = MERKLE["tree"];
  assert.ok(isJsonObject(tree));
  const leaves = strings(tree["leafInputsHex"]).map((h) => leafHash(bytes(h)));
  assert.deepEqual(leaves.map(hex), strings(tree["leafHashesHex"]));
  const roots = strings(tree["rootsHex"]);
  assert.equal(roots.length, 9);
  roots.forEach((root, size) => assert.equal(hex(rootOf(leaves.slice(0, size))), root, `size ${size}`));
});

test("every inclusion probe", () => {
  const probes = list(MERKLE["inclusion"]);
  assert.equal(probes.length, 98);
  for (const p of probes) {
    const proof = strings(p["proofHex"]).map(bytes);
    const valid = ok(() => verifyInclusion(big(p["leafIndex"]), big(p["treeSize"]), bytes(str(p["leafHashHex"])), proof, bytes(str(p["rootHex"]))));
    assert.equal(valid, p["valid"], str(p["id"]));
  }
});

test("every consistency probe", () => {
  const probes = list(MERKLE["consistency"]);
  assert.equal(probes.length, 98);
  for (const p of probes) {
    const proof = strings(p["proofHex"]).map(bytes);
    const valid = ok(() => verifyConsistency(big(p["size1"]), big(p["size2"]), bytes(str(p["root1Hex"])), bytes(str(p["root2Hex"])), proof));
    assert.equal(valid, p["valid"], str(p["id"]));
  }
});
