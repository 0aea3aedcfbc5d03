"""Regenerate the verifiable-log vectors in tlog/ (see README.md).

    python tests/vectors/make_tlog_vectors.py [--merkle-git DIR [--commit SHA]]

writes ``tlog/checkpoints.json`` and ``tlog/proofs.json`` from the guard's own code (``audit``'s
Merkle tree and signed-note checkpoints) over the committed vector log ``audit/audit.jsonl``,
with fixed Ed25519 seeds (Ed25519 is deterministic, so every byte is reproducible). With
``--merkle-git`` (a clone, or a bare git directory, of github.com/transparency-dev/merkle) it also
rewrites ``tlog/merkle-rfc6962.json`` from that repository at ``--commit``: the RFC 6962 hasher
known answers, the leaf inputs and roots of the reference tree, and every inclusion and
consistency probe of its ``testdata/``.

Every vector names what it breaks and carries the decision and reason code both verifiers (the
Python one in ``audit`` and the TypeScript one in ``verifier/``) must reach.
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from audit.tlog import (
    Checkpoint,
    NoteKey,
    consistency_proof,
    inclusion_proof,
    leaf_hash,
    origin_for,
    root_of,
    sign_checkpoint,
)

HERE = Path(__file__).resolve().parent
OUT = HERE / "tlog"
LOG = HERE / "audit" / "audit.jsonl"
MERKLE_COMMIT = "417fb0c314750d94e53942e9f92e79b6d35915db"

LOG_SEED = bytes(range(32))  # the evidence vector's key: one guard key signs both
OTHER_SEED = bytes(range(32, 64))
WITNESS_SEED = bytes(range(64, 96))
PROOF_SCHEMA = "pi-operator-guard/proof/v1"
DASH = "\u2014 "


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class Signer:
    """A fixed Ed25519 key that signs notes under a given name."""

    def __init__(self, seed: bytes) -> None:
        self.private = Ed25519PrivateKey.from_private_bytes(seed)
        self.public = self.private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)

    def note(self, checkpoint: Checkpoint) -> str:
        return sign_checkpoint(checkpoint, self.public, self.private.sign).decode("utf-8")

    def vkey(self, name: str) -> str:
        return NoteKey.for_public(name, self.public).vkey()

    def line(self, name: str, text: str) -> str:
        """A signature line by this key under ``name`` over ``text`` (any text, even a bad one)."""
        key_id = NoteKey.for_public(name, self.public).key_id
        return f"{DASH}{name} {b64(key_id + self.private.sign(text.encode('utf-8')))}\n"


LOG_KEY = Signer(LOG_SEED)
OTHER_KEY = Signer(OTHER_SEED)
WITNESS_KEY = Signer(WITNESS_SEED)


def log_lines() -> list[str]:
    return LOG.read_text(encoding="utf-8").splitlines()


LINES = log_lines()
LEAVES = [leaf_hash(line.encode("utf-8")) for line in LINES]
ORIGIN = origin_for(json.loads(LINES[0])["data"]["logId"])
OTHER_ORIGIN = origin_for("log_AAAAAAAAAAAAAAAAAAAAAAAA")
VKEY = LOG_KEY.vkey(ORIGIN)


def checkpoint(size: int, leaves: list[bytes] = LEAVES, origin: str = ORIGIN) -> Checkpoint:
    return Checkpoint(origin, size, root_of(leaves[:size]))


def ok() -> dict[str, Any]:
    return {"decision": "verified", "reasons": []}


def bad(code: str) -> dict[str, Any]:
    return {"decision": "rejected", "reasons": [code]}


# Proof files, as ``audit.tlog.verify_proof`` answers: valid, invalid (with every reason), or not a
# proof file at all (malformed: the JSON refusal code or proof-malformed).
def valid() -> dict[str, Any]:
    return {"decision": "valid", "reasons": []}


def invalid(*codes: str) -> dict[str, Any]:
    return {"decision": "invalid", "reasons": list(codes)}


def malformed(code: str = "proof-malformed") -> dict[str, Any]:
    return {"decision": "malformed", "reasons": [code]}


# -- checkpoints ---------------------------------------------------------------------------------


def _resign(text: str) -> str:
    """``text`` (any checkpoint-like text) with a valid signature by the log key."""
    return text + "\n" + LOG_KEY.line(ORIGIN, text)


def _swap_line(note: str, index: int, value: str) -> str:
    lines = note.split("\n")
    lines[index] = value
    return "\n".join(lines)


def _edit_sig(note: str, edit: Callable[[bytes], bytes]) -> str:
    text, _, sigline = note.partition("\n\n")
    name, encoded = sigline[len(DASH) :].rstrip("\n").split(" ")
    return f"{text}\n\n{DASH}{name} {b64(edit(base64.b64decode(encoded)))}\n"


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 1]) + data[at + 1 :]


def checkpoint_vectors() -> list[dict[str, Any]]:
    good = LOG_KEY.note(checkpoint(8))
    text = good.partition("\n\n")[0] + "\n"
    root8 = b64(root_of(LEAVES))
    witness = WITNESS_KEY.line("witness.example/w1", text)
    other_log = OTHER_KEY.note(Checkpoint(ORIGIN, 8, root_of(LEAVES)))
    vectors: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = [
        ("valid", good, {}, ok()),
        ("valid-size-1", LOG_KEY.note(checkpoint(1)), {}, ok()),
        ("valid-expected-origin", good, {"origin": ORIGIN}, ok()),
        ("valid-with-witness-cosignature", good + witness, {}, ok()),
        ("valid-witness-line-first", text + "\n" + witness + good.partition("\n\n")[2], {}, ok()),
        (
            "valid-known-witness-key-verifies",
            good + witness,
            {"keys": [VKEY, WITNESS_KEY.vkey("witness.example/w1")]},
            ok(),
        ),
        ("valid-largest-size", _resign(f"{ORIGIN}\n{(1 << 63) - 1}\n{root8}\n"), {}, ok()),
        ("valid-same-line-twice", good + good.partition("\n\n")[2], {}, ok()),
        ("origin-mismatch", good, {"origin": OTHER_ORIGIN}, bad("origin-mismatch")),
        (
            "signature-bit-flipped",
            _edit_sig(good, lambda b: _flip(b, 10)),
            {},
            bad("signature-invalid"),
        ),
        ("key-id-changed", _edit_sig(good, lambda b: _flip(b, 0)), {}, bad("no-trusted-signature")),
        (
            "key-name-changed",
            good.replace(f"{DASH}{ORIGIN} ", f"{DASH}{OTHER_ORIGIN} "),
            {},
            bad("no-trusted-signature"),
        ),
        ("signed-by-another-key", other_log, {}, bad("no-trusted-signature")),
        ("only-a-witness-signature", text + "\n" + witness, {}, bad("no-trusted-signature")),
        (
            # Trusted, and its signature verifies, but it is not the log's key: only the
            # key named the origin vouches for a checkpoint (a witness only cosigns).
            "only-a-trusted-witness-signature",
            text + "\n" + witness,
            {"keys": [VKEY, WITNESS_KEY.vkey("witness.example/w1")]},
            bad("no-trusted-signature"),
        ),
        (
            "known-witness-signature-bad",
            good + _edit_sig(text + "\n" + witness, lambda b: _flip(b, 20)).partition("\n\n")[2],
            {"keys": [VKEY, WITNESS_KEY.vkey("witness.example/w1")]},
            bad("signature-invalid"),
        ),
        ("size-edited", _swap_line(good, 1, "7"), {}, bad("signature-invalid")),
        ("root-edited", _swap_line(good, 2, b64(LEAVES[0])), {}, bad("signature-invalid")),
        (
            "origin-edited",
            _swap_line(good, 0, OTHER_ORIGIN),
            {"keys": [VKEY, LOG_KEY.vkey(OTHER_ORIGIN)]},
            bad("signature-invalid"),
        ),
        (
            "signature-not-base64",
            _edit_sig(good, lambda b: b)[:-3] + "!!\n",
            {},
            bad("note-malformed"),
        ),
        ("signature-base64-unpadded", good.rstrip("=\n") + "\n", {}, bad("note-malformed")),
        # b"\xfb\xff" encodes as "+/": the URL-safe alphabet then has "-_" where "+/" belong.
        (
            "signature-base64url",
            _edit_sig(good, lambda b: b"\xfb\xff" + b).replace("+", "-").replace("/", "_"),
            {},
            bad("note-malformed"),
        ),
        ("signature-too-short", _edit_sig(good, lambda b: b[:4]), {}, bad("note-malformed")),
        ("signature-truncated", _edit_sig(good, lambda b: b[:-1]), {}, bad("signature-invalid")),
        ("size-leading-zero", _resign(f"{ORIGIN}\n08\n{root8}\n"), {}, bad("checkpoint-malformed")),
        ("size-plus-sign", _resign(f"{ORIGIN}\n+8\n{root8}\n"), {}, bad("checkpoint-malformed")),
        ("size-hex", _resign(f"{ORIGIN}\n0x8\n{root8}\n"), {}, bad("checkpoint-malformed")),
        (
            "size-arabic-digit",
            _resign(f"{ORIGIN}\n\u0668\n{root8}\n"),
            {},
            bad("checkpoint-malformed"),
        ),
        ("size-negative", _resign(f"{ORIGIN}\n-8\n{root8}\n"), {}, bad("checkpoint-malformed")),
        (
            "size-2-to-the-63",
            _resign(f"{ORIGIN}\n{1 << 63}\n{root8}\n"),
            {},
            bad("checkpoint-malformed"),
        ),
        ("size-empty", _resign(f"{ORIGIN}\n\n{root8}\n"), {}, bad("note-malformed")),
        (
            "root-31-bytes",
            _resign(f"{ORIGIN}\n8\n{b64(root_of(LEAVES)[:31])}\n"),
            {},
            bad("checkpoint-malformed"),
        ),
        (
            "root-33-bytes",
            _resign(f"{ORIGIN}\n8\n{b64(root_of(LEAVES) + b'x')}\n"),
            {},
            bad("checkpoint-malformed"),
        ),
        (
            "root-hex",
            _resign(f"{ORIGIN}\n8\n{root_of(LEAVES).hex()}\n"),
            {},
            bad("checkpoint-malformed"),
        ),
        (
            "root-non-canonical-base64",
            _resign(f"{ORIGIN}\n8\n{root8[:-2]}B=\n"),
            {},
            bad("note-malformed"),
        ),
        (
            "extension-line",
            _resign(f"{ORIGIN}\n8\n{root8}\nextension\n"),
            {},
            bad("checkpoint-malformed"),
        ),
        ("two-lines-only", _resign(f"{ORIGIN}\n8\n"), {}, bad("checkpoint-malformed")),
        ("origin-padded", _resign(f" {ORIGIN}\n8\n{root8}\n"), {}, bad("checkpoint-malformed")),
        (
            "origin-nbsp-padded",
            _resign(f"{ORIGIN}\u00a0\n8\n{root8}\n"),
            {},
            bad("checkpoint-malformed"),
        ),
        ("missing-blank-line", good.replace("\n\n", "\n"), {}, bad("note-malformed")),
        ("no-signature-lines", text + "\n", {}, bad("note-malformed")),
        ("crlf-line-endings", good.replace("\n", "\r\n"), {}, bad("note-malformed")),
        ("missing-final-newline", good[:-1], {}, bad("note-malformed")),
        ("blank-line-at-end", good + "\n", {}, bad("note-malformed")),
        ("two-blank-lines", good.replace("\n\n", "\n\n\n"), {}, bad("note-malformed")),
        ("hyphen-instead-of-em-dash", good.replace(DASH, "- "), {}, bad("note-malformed")),
        ("em-dash-without-space", good.replace(DASH, "\u2014"), {}, bad("note-malformed")),
        (
            "two-spaces-in-signature-line",
            good.replace(f"{DASH}{ORIGIN} ", f"{DASH}{ORIGIN}  "),
            {},
            bad("note-malformed"),
        ),
        (
            "tab-in-signature-line",
            good.replace(f"{DASH}{ORIGIN} ", f"{DASH}{ORIGIN}\t"),
            {},
            bad("note-malformed"),
        ),
        ("nul-in-text", _resign(f"{ORIGIN}\x00\n8\n{root8}\n"), {}, bad("note-malformed")),
        ("del-in-text", _resign(f"{ORIGIN}\x7f\n8\n{root8}\n"), {}, bad("note-malformed")),
        ("101-signature-lines", good + witness * 100, {}, bad("note-malformed")),
        ("100-signature-lines", good + witness * 99, {}, ok()),
        ("over-64-kib", good + WITNESS_KEY.line("w" * 2000, text) * 40, {}, bad("note-malformed")),
        ("empty", "", {}, bad("note-malformed")),
        (
            "vkey-key-id-wrong",
            good,
            {"keys": [VKEY[: len(ORIGIN) + 1] + "00000000" + VKEY[len(ORIGIN) + 9 :]]},
            bad("vkey-malformed"),
        ),
        (
            "vkey-not-ed25519",
            good,
            {"keys": [VKEY[: len(ORIGIN) + 10] + b64(b"\x02" + LOG_KEY.public)]},
            bad("vkey-malformed"),
        ),
        (
            "vkey-without-id",
            good,
            {"keys": [ORIGIN + "+" + b64(b"\x01" + LOG_KEY.public)]},
            bad("vkey-malformed"),
        ),
    ]
    out = []
    for name, note, extra, expected in vectors:
        vector: dict[str, Any] = {"id": name, "note": note, "keys": extra.get("keys", [VKEY])}
        if "origin" in extra:
            vector["origin"] = extra["origin"]
        vector["expected"] = expected
        out.append(vector)
    out.append(
        {
            "id": "not-utf8",
            "noteBase64": b64(
                good.encode("utf-8").replace(ORIGIN.encode(), ORIGIN.encode() + b"\xff", 1)
            ),
            "keys": [VKEY],
            "expected": bad("note-malformed"),
        }
    )
    return out


# -- proof files ---------------------------------------------------------------------------------


def _dump(proof: dict[str, Any]) -> str:
    return json.dumps(proof, ensure_ascii=False)


def inclusion_file(
    indices: list[int],
    *,
    note: str | None = None,
    leaves: list[bytes] = LEAVES,
    lines: list[str] = LINES,
    size: int = 8,
    edit: Callable[[dict[str, Any]], None] | None = None,
) -> str:
    entries = [
        {
            "leafIndex": i,
            "line": lines[i],
            "hashes": [b64(h) for h in inclusion_proof(leaves[:size], i)],
        }
        for i in indices
    ]
    proof: dict[str, Any] = {
        "schema": PROOF_SCHEMA,
        "kind": "inclusion",
        "checkpoint": note if note is not None else LOG_KEY.note(checkpoint(size, leaves)),
        "entries": entries,
    }
    if edit is not None:
        edit(proof)
    return _dump(proof)


def consistency_file(
    m: int,
    n: int,
    *,
    old: str | None = None,
    new: str | None = None,
    edit: Callable[[dict[str, Any]], None] | None = None,
) -> str:
    proof: dict[str, Any] = {
        "schema": PROOF_SCHEMA,
        "kind": "consistency",
        "old": old if old is not None else LOG_KEY.note(checkpoint(m)),
        "new": new if new is not None else LOG_KEY.note(checkpoint(n)),
        "hashes": [b64(h) for h in consistency_proof(LEAVES[:n], m)] if 0 < m <= n else [],
    }
    if edit is not None:
        edit(proof)
    return _dump(proof)


def _entry(proof: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = proof["entries"][0]
    return entry


def _flip_b64(text: str) -> str:
    return b64(_flip(base64.b64decode(text), 0))


def proof_vectors() -> list[dict[str, Any]]:
    # A log whose records 2 and 3 swapped places: each line is in the tree, but not at its seq.
    swapped_lines = [*LINES[:2], LINES[3], LINES[2], *LINES[4:]]
    swapped = [leaf_hash(line.encode()) for line in swapped_lines]
    # A fork: the same size, record 5 rewritten.
    forked_lines = [*LINES[:5], LINES[5].replace('"seq":5', '"seq":5 ', 1), *LINES[6:]]
    forked = [leaf_hash(line.encode()) for line in forked_lines]

    def set_(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
        return lambda p: p.__setitem__(key, value)

    def entry_set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
        return lambda p: _entry(p).__setitem__(key, value)

    def hashes(edit: Callable[[list[str]], list[str]]) -> Callable[[dict[str, Any]], None]:
        return lambda p: _entry(p).__setitem__("hashes", edit(_entry(p)["hashes"]))

    def chashes(edit: Callable[[list[str]], list[str]]) -> Callable[[dict[str, Any]], None]:
        return lambda p: p.__setitem__("hashes", edit(p["hashes"]))

    good = inclusion_file([5])
    vectors: list[tuple[str, str, list[str], dict[str, Any]]] = [
        ("inclusion-valid", good, [VKEY], valid()),
        ("inclusion-valid-every-record", inclusion_file(list(range(8))), [VKEY], valid()),
        ("inclusion-valid-first-record-size-1", inclusion_file([0], size=1), [VKEY], valid()),
        ("inclusion-valid-last-record-size-7", inclusion_file([6], size=7), [VKEY], valid()),
        (
            "inclusion-hash-flipped",
            inclusion_file([5], edit=hashes(lambda h: [_flip_b64(h[0]), *h[1:]])),
            [VKEY],
            invalid("root-mismatch"),
        ),
        (
            "inclusion-hash-missing",
            inclusion_file([5], edit=hashes(lambda h: h[:-1])),
            [VKEY],
            invalid("proof-too-short"),
        ),
        (
            "inclusion-hash-extra",
            inclusion_file([5], edit=hashes(lambda h: [*h, h[0]])),
            [VKEY],
            invalid("proof-too-long"),
        ),
        (
            "inclusion-hashes-reordered",
            inclusion_file([5], edit=hashes(lambda h: h[::-1])),
            [VKEY],
            invalid("root-mismatch"),
        ),
        (
            "inclusion-wrong-index",
            inclusion_file([5], edit=entry_set("leafIndex", 4)),
            [VKEY],
            invalid("leaf-mismatch"),
        ),
        (
            "inclusion-index-past-size",
            inclusion_file([5], edit=entry_set("leafIndex", 8)),
            [VKEY],
            invalid("leaf-mismatch"),
        ),
        (
            "inclusion-wrong-size",
            inclusion_file([5], note=LOG_KEY.note(checkpoint(7))),
            [VKEY],
            invalid("root-mismatch"),
        ),
        (
            "inclusion-line-edited",
            inclusion_file([5], edit=entry_set("line", LINES[5].replace('"seq":5', '"seq":5 ', 1))),
            [VKEY],
            invalid("record-malformed-line"),
        ),
        (
            "inclusion-line-with-lf",
            inclusion_file([5], edit=entry_set("line", LINES[5] + "\n")),
            [VKEY],
            invalid("record-malformed-line"),
        ),
        (
            "inclusion-line-of-another-record",
            inclusion_file([5], edit=entry_set("line", LINES[4])),
            [VKEY],
            invalid("leaf-mismatch"),
        ),
        (
            "inclusion-seq-is-not-leaf-index",
            inclusion_file([2], leaves=swapped, lines=swapped_lines),
            [VKEY],
            invalid("leaf-mismatch"),
        ),
        (
            "inclusion-record-past-the-checkpoint",
            inclusion_file([7], note=LOG_KEY.note(checkpoint(7))),
            [VKEY],
            invalid("index-out-of-range"),
        ),
        (
            "inclusion-record-rehashed-wrong",
            inclusion_file(
                [5], edit=entry_set("line", LINES[5].replace('"ts":"2026', '"ts":"2025', 1))
            ),
            [VKEY],
            invalid("record-hash-mismatch"),
        ),
        (
            "inclusion-one-good-one-bad-entry",
            inclusion_file(
                [4, 5],
                edit=lambda p: p["entries"][1].__setitem__(
                    "hashes", p["entries"][1]["hashes"][:-1]
                ),
            ),
            [VKEY],
            invalid("proof-too-short"),
        ),
        (
            "inclusion-two-bad-entries",
            inclusion_file(
                [5, 6, 7],
                edit=lambda p: (
                    p["entries"][0].__setitem__(
                        "hashes",
                        [_flip_b64(p["entries"][0]["hashes"][0]), *p["entries"][0]["hashes"][1:]],
                    ),
                    p["entries"][1].__setitem__("line", LINES[6] + " "),
                    p["entries"][2].__setitem__(
                        "hashes",
                        [_flip_b64(p["entries"][2]["hashes"][0]), *p["entries"][2]["hashes"][1:]],
                    ),
                ),
            ),
            [VKEY],
            invalid("root-mismatch", "record-malformed-line"),
        ),
        (
            "inclusion-checkpoint-of-another-log",
            inclusion_file([5], note=LOG_KEY.note(Checkpoint(OTHER_ORIGIN, 8, root_of(LEAVES)))),
            [VKEY],
            invalid("no-trusted-signature"),
        ),
        (
            "inclusion-checkpoint-signed-by-another-key",
            inclusion_file([5], note=OTHER_KEY.note(checkpoint(8))),
            [VKEY],
            invalid("no-trusted-signature"),
        ),
        (
            "inclusion-checkpoint-signature-bad",
            inclusion_file([5], note=_edit_sig(LOG_KEY.note(checkpoint(8)), lambda b: _flip(b, 9))),
            [VKEY],
            invalid("signature-invalid"),
        ),
        (
            "inclusion-checkpoint-malformed",
            inclusion_file([5], note=LOG_KEY.note(checkpoint(8))[:-1]),
            [VKEY],
            invalid("note-malformed"),
        ),
        (
            "inclusion-hash-not-32-bytes",
            inclusion_file([5], edit=hashes(lambda h: [b64(b"x" * 31), *h[1:]])),
            [VKEY],
            invalid("proof-malformed"),
        ),
        (
            "inclusion-hash-not-base64",
            inclusion_file([5], edit=hashes(lambda h: ["not base64!", *h[1:]])),
            [VKEY],
            invalid("proof-malformed"),
        ),
        (
            "inclusion-leaf-index-negative",
            inclusion_file([5], edit=entry_set("leafIndex", -1)),
            [VKEY],
            malformed(),
        ),
        (
            "inclusion-leaf-index-a-string",
            inclusion_file([5], edit=entry_set("leafIndex", "5")),
            [VKEY],
            malformed(),
        ),
        (
            "inclusion-leaf-index-a-float",
            inclusion_file([5], edit=entry_set("leafIndex", 5.0)),
            [VKEY],
            malformed(),
        ),
        (
            "inclusion-no-entries",
            inclusion_file([5], edit=set_("entries", [])),
            [VKEY],
            malformed(),
        ),
        (
            "inclusion-extra-field",
            inclusion_file([5], edit=set_("note", "x")),
            [VKEY],
            malformed(),
        ),
        (
            "inclusion-entry-extra-field",
            inclusion_file([5], edit=entry_set("hash", "x")),
            [VKEY],
            malformed(),
        ),
        (
            "inclusion-snake-case-field",
            inclusion_file(
                [5], edit=lambda p: _entry(p).__setitem__("leaf_index", _entry(p).pop("leafIndex"))
            ),
            [VKEY],
            malformed(),
        ),
        (
            "inclusion-schema-by-python-name",
            inclusion_file([5], edit=lambda p: p.__setitem__("schema_", p.pop("schema"))),
            [VKEY],
            malformed(),
        ),
        (
            "inclusion-wrong-schema",
            inclusion_file([5], edit=set_("schema", "pi-operator-guard/proof/v2")),
            [VKEY],
            malformed(),
        ),
        (
            "inclusion-wrong-kind",
            inclusion_file([5], edit=set_("kind", "consistency")),
            [VKEY],
            malformed(),
        ),
        (
            "inclusion-duplicate-key",
            good.replace('"kind": "inclusion"', '"kind": "inclusion", "kind": "inclusion"'),
            [VKEY],
            malformed("duplicate-key"),
        ),
        ("not-json", good[:-1], [VKEY], malformed("invalid-json")),
        ("consistency-valid-3-to-8", consistency_file(3, 8), [VKEY], valid()),
        ("consistency-valid-1-to-8", consistency_file(1, 8), [VKEY], valid()),
        ("consistency-valid-4-to-8", consistency_file(4, 8), [VKEY], valid()),
        ("consistency-valid-7-to-8", consistency_file(7, 8), [VKEY], valid()),
        (
            "consistency-valid-5-to-7",
            consistency_file(5, 7, new=LOG_KEY.note(checkpoint(7))),
            [VKEY],
            valid(),
        ),
        ("consistency-valid-same-size", consistency_file(8, 8), [VKEY], valid()),
        (
            "consistency-hash-flipped",
            consistency_file(3, 8, edit=chashes(lambda h: [_flip_b64(h[0]), *h[1:]])),
            [VKEY],
            invalid("old-root-mismatch"),
        ),
        (
            "consistency-last-hash-flipped",
            consistency_file(3, 8, edit=chashes(lambda h: [*h[:-1], _flip_b64(h[-1])])),
            [VKEY],
            invalid("root-mismatch"),
        ),
        (
            "consistency-hash-missing",
            consistency_file(3, 8, edit=chashes(lambda h: h[:-1])),
            [VKEY],
            invalid("proof-too-short"),
        ),
        (
            "consistency-hash-extra",
            consistency_file(3, 8, edit=chashes(lambda h: [*h, h[0]])),
            [VKEY],
            invalid("proof-too-long"),
        ),
        (
            "consistency-empty-proof",
            consistency_file(3, 8, edit=chashes(lambda h: [])),
            [VKEY],
            invalid("proof-too-short"),
        ),
        (
            "consistency-same-size-with-hashes",
            consistency_file(8, 8, edit=chashes(lambda h: [b64(LEAVES[0])])),
            [VKEY],
            invalid("proof-too-long"),
        ),
        (
            "consistency-rollback",
            consistency_file(
                8, 3, old=LOG_KEY.note(checkpoint(8)), new=LOG_KEY.note(checkpoint(3))
            ),
            [VKEY],
            invalid("size-out-of-range"),
        ),
        (
            "consistency-from-size-0",
            consistency_file(0, 8, old=LOG_KEY.note(Checkpoint(ORIGIN, 0, root_of([])))),
            [VKEY],
            invalid("size-out-of-range"),
        ),
        (
            "consistency-fork-same-size",
            consistency_file(8, 8, new=LOG_KEY.note(Checkpoint(ORIGIN, 8, root_of(forked)))),
            [VKEY],
            invalid("root-mismatch"),
        ),
        (
            "consistency-fork",
            consistency_file(3, 8, new=LOG_KEY.note(Checkpoint(ORIGIN, 8, root_of(forked)))),
            [VKEY],
            invalid("root-mismatch"),
        ),
        (
            "consistency-old-of-another-log",
            consistency_file(
                3, 8, old=LOG_KEY.note(Checkpoint(OTHER_ORIGIN, 3, root_of(LEAVES[:3])))
            ),
            [VKEY, LOG_KEY.vkey(OTHER_ORIGIN)],
            invalid("origin-mismatch"),
        ),
        (
            "consistency-old-signature-bad",
            consistency_file(
                3, 8, old=_edit_sig(LOG_KEY.note(checkpoint(3)), lambda b: _flip(b, 9))
            ),
            [VKEY],
            invalid("signature-invalid"),
        ),
        (
            "consistency-new-signed-by-another-key",
            consistency_file(3, 8, new=OTHER_KEY.note(checkpoint(8))),
            [VKEY],
            invalid("no-trusted-signature"),
        ),
        (
            "consistency-new-unsigned",
            consistency_file(3, 8, new=LOG_KEY.note(checkpoint(8)).partition("\n\n")[0] + "\n"),
            [VKEY],
            invalid("note-malformed"),
        ),
        (
            "consistency-hash-not-32-bytes",
            consistency_file(3, 8, edit=chashes(lambda h: [*h[:-1], b64(b"")])),
            [VKEY],
            invalid("proof-malformed"),
        ),
        (
            "consistency-missing-new",
            consistency_file(3, 8, edit=lambda p: p.pop("new")),
            [VKEY],
            malformed(),
        ),
    ]
    return [
        {"id": name, "file": text, "keys": keys, "expected": expected}
        for name, text, keys, expected in vectors
    ]


# -- RFC 6962 / RFC 9162 vectors from transparency-dev/merkle --------------------------------------


def _git_show(repo: Path, commit: str, path: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "show", f"{commit}:{path}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def _git_files(repo: Path, commit: str, under: str) -> list[str]:
    done = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "-r", "--name-only", commit, under],
        capture_output=True,
        text=True,
        check=True,
    )
    return sorted(line for line in done.stdout.splitlines() if line.endswith(".json"))


def _b64_to_hex(value: str | None) -> str:
    return "" if value is None else base64.b64decode(value).hex()


def merkle_vectors(repo: Path, commit: str) -> dict[str, Any]:
    constants = _git_show(repo, commit, "testonly/constants.go")
    body = constants.split("func LeafInputs()")[1].split("func NodeHashes()")[0]
    leaf_inputs = re.findall(r'hd\("([0-9a-f]*)"\)', body)
    roots_body = constants.split("func RootHashes()")[1].split("func CompactTrees()")[0]
    roots = ["e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"]
    roots += re.findall(r'hd\("([0-9a-f]{64})"\)', roots_body)
    nodes_body = constants.split("func NodeHashes()")[1].split("func RootHashes()")[0]
    leaf_level = nodes_body.split("}, {")[0]
    leaf_hashes = re.findall(r'hd\("([0-9a-f]{64})"\)', leaf_level)
    hasher = _git_show(repo, commit, "rfc6962/rfc6962_test.go")
    wants = re.findall(r'want: "([0-9a-f]{64})"', hasher)
    known = {
        "emptyRoot": wants[0],
        "emptyLeafHash": wants[1],
        "leafHash": {"leafHex": b"L123456".hex(), "hash": wants[2]},
        "nodeHash": {"leftHex": b"N123".hex(), "rightHex": b"N456".hex(), "hash": wants[3]},
    }
    inclusion = []
    for path in _git_files(repo, commit, "testdata/inclusion"):
        probe = json.loads(_git_show(repo, commit, path))
        inclusion.append(
            {
                "id": path.removeprefix("testdata/inclusion/").removesuffix(".json"),
                "leafIndex": probe["leafIdx"],
                "treeSize": probe["treeSize"],
                "rootHex": _b64_to_hex(probe["root"]),
                "leafHashHex": _b64_to_hex(probe["leafHash"]),
                "proofHex": [_b64_to_hex(h) for h in probe["proof"] or []],
                "valid": not probe["wantErr"],
            }
        )
    consistency = []
    for path in _git_files(repo, commit, "testdata/consistency"):
        probe = json.loads(_git_show(repo, commit, path))
        consistency.append(
            {
                "id": path.removeprefix("testdata/consistency/").removesuffix(".json"),
                "size1": probe["size1"],
                "size2": probe["size2"],
                "root1Hex": _b64_to_hex(probe["root1"]),
                "root2Hex": _b64_to_hex(probe["root2"]),
                "proofHex": [_b64_to_hex(h) for h in probe["proof"] or []],
                "valid": not probe["wantErr"],
            }
        )
    return {
        "source": {
            "repository": "https://github.com/transparency-dev/merkle",
            "commit": commit,
            "paths": [
                "rfc6962/rfc6962_test.go",
                "testonly/constants.go",
                "testdata/inclusion/",
                "testdata/consistency/",
            ],
            "note": "RFC 6962 hashing and the CT reference implementation's tree of 8 leaves; "
            "the probes are what transparency-dev/merkle's cmd/proofgen derived from them",
        },
        "hasher": known,
        "tree": {"leafInputsHex": leaf_inputs, "leafHashesHex": leaf_hashes, "rootsHex": roots},
        "inclusion": inclusion,
        "consistency": consistency,
    }


def _write(name: str, value: Any) -> None:
    (OUT / name).write_text(
        json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--merkle-git", type=Path, help="a clone of transparency-dev/merkle")
    parser.add_argument("--commit", default=MERKLE_COMMIT)
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    if args.merkle_git is not None:
        _write("merkle-rfc6962.json", merkle_vectors(args.merkle_git, args.commit))
    common = {"logSeedHex": LOG_SEED.hex(), "origin": ORIGIN, "vkey": VKEY}
    _write("checkpoints.json", {**common, "vectors": checkpoint_vectors()})
    _write("proofs.json", {**common, "vectors": proof_vectors()})


if __name__ == "__main__":
    main()
