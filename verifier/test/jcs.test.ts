/** RFC 8785 (JCS) known answers (tests/vectors/jcs-rfc8785.json) and ECMAScript number forms. */

import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { CanonicalizationError, canonicalize, serializeNumber } from "../src/jcs.ts";
import { loadJson } from "../src/json.ts";
import { VECTORS } from "./vectors.ts";

interface JcsVector {
  source: string;
  input: string;
  expected: string;
}

const JCS = JSON.parse(readFileSync(join(VECTORS, "jcs-rfc8785.json"), "utf8")) as JcsVector[];

test("the RFC 8785 examples and ours", () => {
  assert.ok(JCS.length >= 3);
  for (const vector of JCS) assert.equal(canonicalize(loadJson(vector.input)), vector.expected, vector.source);
});

test("ECMAScript number serialization (RFC 8785 section 3.2.2.3, appendix B)", () => {
  const cases: [number, string][] = [
    [0, "0"],
    [-0, "0"],
    [1, "1"],
    [-1.5, "-1.5"],
    [5e-324, "5e-324"],
    [1.7976931348623157e308, "1.7976931348623157e+308"],
    [9007199254740992, "9007199254740992"],
    [1e21, "1e+21"],
    [1e20, "100000000000000000000"],
    [0.000001, "0.000001"],
    [1e-7, "1e-7"],
    [333333333.3333333, "333333333.3333333"],
    [295147905179352830000, "295147905179352830000"],
    [4.5, "4.5"],
    [2e-3, "0.002"],
  ];
  for (const [value, text] of cases) assert.equal(serializeNumber(value), text);
  assert.throws(() => serializeNumber(Number.NaN), CanonicalizationError);
  assert.throws(() => serializeNumber(Number.POSITIVE_INFINITY), CanonicalizationError);
});

test("integers beyond 2**53 - 1, lone surrogates and deep nesting are refused", () => {
  assert.equal(canonicalize(loadJson("[9007199254740991, -9007199254740991]")), "[9007199254740991,-9007199254740991]");
  assert.throws(() => canonicalize(loadJson("9007199254740992")), /integer-out-of-range/);
  assert.throws(() => canonicalize(loadJson('"\\ud800"')), /not-canonicalizable/);
  assert.throws(() => canonicalize(loadJson('{"\\udc00": 1}')), /not-canonicalizable/);
  assert.throws(() => canonicalize(loadJson("[".repeat(65) + "]".repeat(65))), /nesting-too-deep/);
  assert.equal(canonicalize(loadJson("[".repeat(64) + "]".repeat(64))).length, 128);
});

test("members sort by UTF-16 code units, not code points", () => {
  // U+FB33 sorts after U+1D54F's surrogates (0xD835) by code unit, before it by code point.
  assert.equal(canonicalize(loadJson('{"\\ufb33": 1, "\\ud835\\udd4f": 2}')), '{"\ud835\udd4f":2,"\ufb33":1}');
});
