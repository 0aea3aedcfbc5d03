/**
 * Strict JSON decoding that refuses what the Python side (`audit.load_json`) refuses, with the
 * same reason codes: `too-large`, `not-utf8`, `invalid-json` (syntax, a byte order mark),
 * `duplicate-key`, `non-finite-number` (NaN, Infinity), `number-too-long`,
 * `number-out-of-range` and `too-deep`.
 *
 * Integers are decoded as `bigint` and every other number as `number`, so that a schema can tell
 * `5` from `5.0` exactly as pydantic's strict mode does, and no integer silently loses precision.
 */

export type JsonValue = null | boolean | bigint | number | string | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue;
}

export const MAX_JSON_BYTES = 1 << 20;
export const MAX_INT_DIGITS = 400;
const MAX_DEPTH = 500;

export class JsonInputError extends Error {
  readonly code: string;
  constructor(code: string, detail: string) {
    super(`${code}: ${detail}`);
    this.code = code;
  }
}

export interface LoadOptions {
  maxBytes?: number;
  maxIntDigits?: number;
}

/** Decode UTF-8 bytes strictly (no replacement characters, a byte order mark kept as text). */
export function decodeUtf8(data: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(data);
  } catch {
    throw new JsonInputError("not-utf8", "not valid UTF-8");
  }
}

export function isJsonObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Decode one JSON text strictly; throws {@link JsonInputError}. */
export function loadJson(input: Uint8Array | string, options: LoadOptions = {}): JsonValue {
  const maxBytes = options.maxBytes ?? MAX_JSON_BYTES;
  const maxIntDigits = options.maxIntDigits ?? MAX_INT_DIGITS;
  let text: string;
  if (typeof input === "string") {
    if (input.length > maxBytes) throw new JsonInputError("too-large", `larger than ${maxBytes} bytes`);
    if (!input.isWellFormed()) throw new JsonInputError("not-utf8", "not valid Unicode (a lone surrogate)");
    if (Buffer.byteLength(input, "utf8") > maxBytes) {
      throw new JsonInputError("too-large", `larger than ${maxBytes} bytes`);
    }
    text = input;
  } else {
    if (input.length > maxBytes) throw new JsonInputError("too-large", `larger than ${maxBytes} bytes`);
    text = decodeUtf8(input);
  }
  return new Parser(text, maxIntDigits).document();
}

const WS = new Set([" ", "\t", "\n", "\r"]);
const ESCAPES: Record<string, string> = {
  '"': '"',
  "\\": "\\",
  "/": "/",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
};
const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/y;

class Parser {
  private pos = 0;
  private readonly text: string;
  private readonly maxIntDigits: number;
  constructor(text: string, maxIntDigits: number) {
    this.text = text;
    this.maxIntDigits = maxIntDigits;
  }

  private fail(what: string): never {
    throw new JsonInputError("invalid-json", `invalid JSON at offset ${this.pos}: ${what}`);
  }

  private skip(): void {
    while (this.pos < this.text.length && WS.has(this.text[this.pos] ?? "")) this.pos++;
  }

  document(): JsonValue {
    this.skip();
    const value = this.value(0);
    this.skip();
    if (this.pos !== this.text.length) this.fail("extra data");
    return value;
  }

  private value(depth: number): JsonValue {
    if (depth > MAX_DEPTH) throw new JsonInputError("too-deep", "nested too deeply");
    const ch = this.text[this.pos];
    switch (ch) {
      case "{":
        return this.object(depth);
      case "[":
        return this.array(depth);
      case '"':
        return this.string();
      case undefined:
        return this.fail("expecting value");
      default:
        break;
    }
    for (const [word, value] of [
      ["null", null],
      ["true", true],
      ["false", false],
    ] as const) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return value;
      }
    }
    for (const word of ["NaN", "Infinity", "-Infinity"]) {
      if (this.text.startsWith(word, this.pos)) {
        throw new JsonInputError("non-finite-number", `NaN and Infinity are not JSON: ${word}`);
      }
    }
    return this.number();
  }

  private number(): JsonValue {
    NUMBER.lastIndex = this.pos;
    const found = NUMBER.exec(this.text);
    if (found === null) return this.fail("expecting value");
    const literal = found[0];
    this.pos += literal.length;
    if (found[1] === undefined && found[2] === undefined) {
      const digits = literal.length - (literal.startsWith("-") ? 1 : 0);
      if (digits > this.maxIntDigits) {
        throw new JsonInputError("number-too-long", `number longer than ${this.maxIntDigits} digits`);
      }
      return BigInt(literal);
    }
    const value = Number(literal);
    if (!Number.isFinite(value)) throw new JsonInputError("number-out-of-range", "number out of range");
    return value;
  }

  private string(): string {
    this.pos++; // the opening quote
    let out = "";
    for (;;) {
      const ch = this.text[this.pos];
      if (ch === undefined) this.fail("unterminated string");
      if (ch === '"') {
        this.pos++;
        return out;
      }
      if (ch === "\\") {
        const next = this.text[this.pos + 1];
        if (next === "u") {
          const hex = this.text.slice(this.pos + 2, this.pos + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail("invalid \\uXXXX escape");
          out += String.fromCharCode(parseInt(hex, 16));
          this.pos += 6;
        } else if (next !== undefined && next in ESCAPES) {
          out += ESCAPES[next];
          this.pos += 2;
        } else {
          this.fail("invalid escape");
        }
        continue;
      }
      if (ch.charCodeAt(0) < 0x20) this.fail("invalid control character in a string");
      out += ch;
      this.pos++;
    }
  }

  private array(depth: number): JsonValue[] {
    this.pos++;
    const out: JsonValue[] = [];
    this.skip();
    if (this.text[this.pos] === "]") {
      this.pos++;
      return out;
    }
    for (;;) {
      this.skip();
      out.push(this.value(depth + 1));
      this.skip();
      const ch = this.text[this.pos];
      this.pos++;
      if (ch === "]") return out;
      if (ch !== ",") {
        this.pos--;
        this.fail("expecting ',' delimiter");
      }
    }
  }

  private object(depth: number): JsonObject {
    this.pos++;
    const pairs: [string, JsonValue][] = [];
    this.skip();
    if (this.text[this.pos] === "}") {
      this.pos++;
      return {};
    }
    for (;;) {
      this.skip();
      if (this.text[this.pos] !== '"') this.fail("expecting property name enclosed in double quotes");
      const key = this.string();
      this.skip();
      if (this.text[this.pos] !== ":") this.fail("expecting ':' delimiter");
      this.pos++;
      this.skip();
      pairs.push([key, this.value(depth + 1)]);
      this.skip();
      const ch = this.text[this.pos];
      this.pos++;
      if (ch === "}") break;
      if (ch !== ",") {
        this.pos--;
        this.fail("expecting ',' delimiter");
      }
    }
    // Python calls its object hook when the object closes: duplicates are found then.
    const out: JsonObject = Object.create(null) as JsonObject;
    const seen = new Set<string>();
    for (const [key, value] of pairs) {
      if (seen.has(key)) throw new JsonInputError("duplicate-key", "duplicate key");
      seen.add(key);
      out[key] = value;
    }
    return out;
  }
}
