/**
 * RFC 8785 JSON Canonicalization Scheme (JCS).
 *
 * Object members are sorted by their UTF-16 code units (JavaScript's own string order),
 * strings are escaped as ECMAScript's JSON.stringify does (which is what RFC 8785 section
 * 3.2.2.2 specifies), and numbers are written in the ECMAScript form (RFC 8785 section 3.2.2.3,
 * which is `Number.prototype.toString`). Integers decoded as `bigint` (see json.ts) must lie
 * within +/-(2**53 - 1), like the Python side's; lone surrogates cannot be UTF-8 and are refused.
 */

import type { JsonValue } from "./json.ts";

export class CanonicalizationError extends Error {
  readonly code: string;
  constructor(code: string, detail: string) {
    super(`${code}: ${detail}`);
    this.code = code;
  }
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MAX_DEPTH = 64;

/** The canonical text of `value`; throws {@link CanonicalizationError}. */
export function canonicalize(value: JsonValue): string {
  return write(value, 0);
}

/** The canonical UTF-8 bytes of `value`. */
export function canonicalBytes(value: JsonValue): Uint8Array {
  return new Uint8Array(Buffer.from(canonicalize(value), "utf8"));
}

/** ECMAScript's Number serialization (RFC 8785 section 3.2.2.3). */
export function serializeNumber(value: number): string {
  if (!Number.isFinite(value)) throw new CanonicalizationError("not-canonicalizable", "NaN or Infinity");
  // Number.prototype.toString is the ES "Number::toString" algorithm; -0 becomes "0".
  return Object.is(value, -0) ? "0" : String(value);
}

function serializeString(value: string): string {
  if (!value.isWellFormed()) {
    throw new CanonicalizationError("not-canonicalizable", "a string holds a lone surrogate");
  }
  // JSON.stringify escapes exactly '"', '\\' and U+0000..U+001F (with \b \f \n \r \t and
  // lowercase \u00xx for the rest), which is RFC 8785 section 3.2.2.2.
  return JSON.stringify(value);
}

function write(value: JsonValue, depth: number): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "bigint":
      if (value > MAX_SAFE || value < -MAX_SAFE) {
        throw new CanonicalizationError("integer-out-of-range", value.toString());
      }
      return value.toString();
    case "number":
      return serializeNumber(value);
    case "string":
      return serializeString(value);
    default:
      break;
  }
  if (depth >= MAX_DEPTH) throw new CanonicalizationError("nesting-too-deep", `deeper than ${MAX_DEPTH} levels`);
  if (Array.isArray(value)) return `[${value.map((item) => write(item, depth + 1)).join(",")}]`;
  const keys = Object.keys(value).sort();
  const members = keys.map((key) => {
    const item = value[key];
    if (item === undefined) throw new CanonicalizationError("unsupported-type", "undefined");
    return `${serializeString(key)}:${write(item, depth + 1)}`;
  });
  return `{${members.join(",")}}`;
}
