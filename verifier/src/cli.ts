#!/usr/bin/env node
/**
 * pi-guard-verify: check what pi-operator-guard wrote, independently of its Python code.
 *
 *     node verifier/src/cli.ts verify-proof FILE (--key VKEY ... | --keyring KEYRING.json)
 *     node verifier/src/cli.ts verify-checkpoint FILE (--key VKEY ... | --keyring KEYRING.json) [--origin ORIGIN]
 *     node verifier/src/cli.ts verify-log LOG [--head FILE] [--against CHECKPOINT] (--keyring KEYRING.json | --key VKEY ...)
 *     node verifier/src/cli.ts verify-envelope FILE --keyring KEYRING.json (--tool-call-id ID | --call-checked-elsewhere)
 *                                [--now ISO] [--skew S] [--max-ttl S] [--require-dialog] [--require-operator-signature]
 *
 * FILE may be `-` for standard input. The result is one JSON object on stdout. Exit codes, as
 * the guard's: 0 verified, 2 bad usage or unreadable input (a file that is not a proof file),
 * 3 evidence rejected, 4 a proof or checkpoint that does not verify, 1 an internal error. `--key` takes a vkey
 * (`<name>+<hex id>+<base64 key>`) or `@FILE` holding one vkey per line; `--keyring` takes the
 * guard's public keyring instead (each key named after the checkpoint's origin).
 */

import { existsSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";

import { verifyEnvelope } from "./envelope.ts";
import { KeyringError, PublicKeyring } from "./keyring.ts";
import { NoteError, NoteKey, type NoteKeys, openCheckpoint } from "./note.ts";
import { verifyLog } from "./log.ts";
import { verifyProofFile } from "./proof.ts";
import { parseIsoMillis } from "./time.ts";

const USAGE = `usage: pi-guard-verify verify-proof FILE (--key VKEY [--key VKEY ...] | --keyring KEYRING.json)
       pi-guard-verify verify-checkpoint FILE (--key VKEY ... | --keyring KEYRING.json) [--origin ORIGIN]
       pi-guard-verify verify-log LOG [--head FILE] [--against CHECKPOINT] (--keyring KEYRING.json | --key VKEY ...)
       pi-guard-verify verify-envelope FILE --keyring KEYRING.json (--tool-call-id ID | --call-checked-elsewhere)
                                 [--now ISO] [--skew SECONDS] [--max-ttl SECONDS] [--require-dialog] [--require-operator-signature]`;

class UsageError extends Error {}

function read(path: string): Uint8Array {
  try {
    return new Uint8Array(readFileSync(path === "-" ? 0 : path));
  } catch (exc) {
    throw new UsageError(`cannot read ${path}: ${(exc as NodeJS.ErrnoException).code ?? String(exc)}`);
  }
}

function loadKeyring(path: string): PublicKeyring {
  try {
    return PublicKeyring.parse(read(path));
  } catch (exc) {
    if (exc instanceof KeyringError) throw new UsageError(`bad keyring: ${exc.message}`);
    throw exc;
  }
}

function noteKeys(values: readonly string[] | undefined, keyring: string | undefined): NoteKeys {
  if (keyring !== undefined) {
    if (values !== undefined) throw new UsageError("give --key or --keyring, not both");
    const ring = loadKeyring(keyring);
    return (origin: string) => ring.noteKeys(origin);
  }
  return keys(values);
}

function keys(values: readonly string[] | undefined): NoteKey[] {
  if (values === undefined || values.length === 0) throw new UsageError("give the log's key with --key VKEY or --keyring FILE");
  const vkeys = values.flatMap((value) =>
    value.startsWith("@")
      ? Buffer.from(read(value.slice(1)))
          .toString("utf8")
          .split("\n")
          .map((line) => line.trim())
          .filter((line) => line !== "" && !line.startsWith("#"))
      : [value],
  );
  return vkeys.map((vkey) => {
    try {
      return NoteKey.fromVkey(vkey);
    } catch (exc) {
      throw new UsageError(`bad vkey: ${exc instanceof NoteError ? exc.message : String(exc)}`);
    }
  });
}

function seconds(value: string | undefined, fallback: number, what: string): number {
  if (value === undefined) return fallback;
  if (!/^[0-9]{1,6}$/.test(value)) throw new UsageError(`${what} must be a whole number of seconds`);
  return Number(value);
}

/** JSON with big integers written as the numbers they are (tree sizes reach 2**63). */
function json(value: unknown): string {
  if (typeof value === "bigint") return value.toString();
  if (Array.isArray(value)) return `[${value.map(json).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const members = Object.entries(value).filter(([, v]) => v !== undefined);
    return `{${members.map(([k, v]) => `${JSON.stringify(k)}:${json(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

function emit(value: unknown): void {
  process.stdout.write(`${json(value)}\n`);
}

function run(argv: string[]): number {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      key: { type: "string", multiple: true },
      origin: { type: "string" },
      keyring: { type: "string" },
      head: { type: "string" },
      against: { type: "string" },
      now: { type: "string" },
      skew: { type: "string" },
      "max-ttl": { type: "string" },
      "tool-call-id": { type: "string" },
      "call-checked-elsewhere": { type: "boolean" },
      "require-dialog": { type: "boolean" },
      "require-operator-signature": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const [command, file, ...extra] = positionals;
  if (command === undefined || file === undefined || extra.length > 0) throw new UsageError(USAGE);
  switch (command) {
    case "verify-proof": {
      const result = verifyProofFile(read(file), noteKeys(values.key, values.keyring));
      emit(result);
      if (result.decision === "malformed") {
        process.stderr.write(`pi-guard-verify: not a proof file (${result.reasons.join(", ")})\n`);
        return 2;
      }
      return result.decision === "valid" ? 0 : 4;
    }
    case "verify-checkpoint": {
      const known = noteKeys(values.key, values.keyring);
      try {
        const signed = openCheckpoint(read(file), known, values.origin === undefined ? {} : { origin: values.origin });
        const { origin, size, root } = signed.checkpoint;
        emit({ decision: "verified", reasons: [], origin, treeSize: size, root: Buffer.from(root).toString("base64"), signer: signed.signer.name, vkey: signed.signer.vkey() });
        return 0;
      } catch (exc) {
        if (!(exc instanceof NoteError)) throw exc;
        emit({ decision: "rejected", reasons: [exc.code] });
        return 4;
      }
    }
    case "verify-log": {
      const keys = noteKeys(values.key, values.keyring);
      const headPath = values.head ?? `${file}.head`;
      const head = values.head !== undefined || existsSync(headPath) ? read(headPath) : null;
      const against = values.against === undefined ? null : read(values.against);
      const result = verifyLog(read(file), head, keys, against);
      emit(result);
      return result.decision === "intact" ? 0 : 4;
    }
    case "verify-envelope": {
      if (values.keyring === undefined) throw new UsageError("give the guard's public keyring with --keyring FILE");
      const keyring = loadKeyring(values.keyring);
      const now = values.now === undefined ? Date.now() : parseIsoMillis(values.now);
      if (now === null) throw new UsageError("--now must be like 2026-11-22T01:00:00.000Z");
      const result = verifyEnvelope(read(file), {
        keyring,
        now,
        skewSeconds: seconds(values.skew, 5, "--skew"),
        maxTtlSeconds: seconds(values["max-ttl"], 600, "--max-ttl"),
        ...(values["tool-call-id"] === undefined ? {} : { toolCallId: values["tool-call-id"] }),
        callCheckedElsewhere: values["call-checked-elsewhere"] === true,
        requireDialog: values["require-dialog"] === true,
        requireOperatorSignature: values["require-operator-signature"] === true,
      });
      emit(result);
      return result.decision === "match" ? 0 : 3;
    }
    default:
      throw new UsageError(USAGE);
  }
}

function main(): number {
  try {
    return run(process.argv.slice(2));
  } catch (exc) {
    if (exc instanceof UsageError || (exc instanceof TypeError && "code" in exc && String(exc.code).startsWith("ERR_PARSE_ARGS"))) {
      const message = exc.message.startsWith("usage:") ? exc.message : `pi-guard-verify: ${exc.message.split("\n")[0] ?? ""}`;
      process.stderr.write(`${message}\n`);
      return 2;
    }
    process.stderr.write(`pi-guard-verify: internal error: ${String(exc).split("\n")[0] ?? ""}\n`);
    return 1;
  }
}

process.exitCode = main();
