"""``open_checkpoint`` and ``parse_checkpoint``: which key signed, what comes back, and the
words of each refusal (size, encoding, a bad signature, where the signatures begin).

A checkpoint may carry cosignatures (a witness signs the same text under its own name): the
signer reported is always the log's own key, whatever order the signatures come in.
"""

from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from audit import (
    Checkpoint,
    NoteError,
    NoteKey,
    leaf_hash,
    open_checkpoint,
    origin_for,
    parse_checkpoint,
    sign_checkpoint,
)
from audit._note import MAX_NOTE_BYTES

LOG_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
WITNESS_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(1, 33)))
ORIGIN = origin_for("log_abcdefghijklmnopqrstuv")
CHECKPOINT = Checkpoint(ORIGIN, 7, leaf_hash(b"root"))


def _raw(key: Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


LOG = NoteKey.for_public(ORIGIN, _raw(LOG_KEY))
WITNESS = NoteKey.for_public("witness.example/w1", _raw(WITNESS_KEY))


def _note() -> bytes:
    return sign_checkpoint(CHECKPOINT, _raw(LOG_KEY), LOG_KEY.sign)


def _cosigned_witness_first() -> bytes:
    note = _note()
    _, text, _ = parse_checkpoint(note)
    body, _, own = note.partition(b"\n\n")
    cosignature = base64.b64encode(WITNESS.key_id + WITNESS_KEY.sign(text))
    line = "— ".encode() + WITNESS.name.encode() + b" " + cosignature + b"\n"
    return body + b"\n\n" + line + own


def test_the_signer_is_the_logs_key_even_after_a_cosignature() -> None:
    note = _cosigned_witness_first()
    opened = open_checkpoint(note, [WITNESS, LOG])
    assert opened.signer == LOG
    assert opened.note == note
    assert opened.signatures == parse_checkpoint(note)[2]
    assert [s.name for s in opened.signatures] == [WITNESS.name, ORIGIN]


def test_a_bad_signature_by_a_known_key_is_refused_with_its_name() -> None:
    note = _note()
    body, _, line = note.partition(b"\n\n")
    prefix, _, encoded = line.rstrip(b"\n").rpartition(b" ")
    blob = bytearray(base64.b64decode(encoded))
    blob[-1] ^= 0x01  # the signature, not the key id
    forged = body + b"\n\n" + prefix + b" " + base64.b64encode(bytes(blob)) + b"\n"
    with pytest.raises(NoteError) as caught:
        open_checkpoint(forged, [LOG])
    assert (caught.value.code, caught.value.detail) == (
        "signature-invalid",
        f"the signature by {ORIGIN} is bad",
    )


def test_a_note_over_the_size_cap_is_refused_and_one_at_the_cap_is_read() -> None:
    with pytest.raises(NoteError) as caught:
        parse_checkpoint(b"x" * (MAX_NOTE_BYTES + 1))
    assert (caught.value.code, caught.value.detail) == (
        "note-malformed",
        f"the note is over {MAX_NOTE_BYTES} bytes",
    )
    with pytest.raises(NoteError) as caught:
        parse_checkpoint(b"x" * MAX_NOTE_BYTES)  # read, then refused for what it says
    assert caught.value.detail != f"the note is over {MAX_NOTE_BYTES} bytes"


def test_a_note_that_is_not_utf8_is_refused_with_its_words() -> None:
    with pytest.raises(NoteError) as caught:
        parse_checkpoint(_note().replace(b"\n\n", b"\n\xff\n\n", 1))
    assert (caught.value.code, caught.value.detail) == (
        "note-malformed",
        "the note is not UTF-8",
    )


def test_a_note_signed_only_by_a_cosigner_is_not_trusted() -> None:
    note = _cosigned_witness_first()
    body, _, lines = note.partition(b"\n\n")
    witness_only = body + b"\n\n" + lines.splitlines(keepends=True)[0]
    with pytest.raises(NoteError) as caught:
        open_checkpoint(witness_only, [WITNESS, LOG])  # the witness's signature verifies
    assert (caught.value.code, caught.value.detail) == (
        "no-trusted-signature",
        "no signature by the log's key verifies",
    )


def test_the_signatures_start_after_the_last_blank_line() -> None:
    # C2SP signed-note: the text ends at the note's last blank line, so a blank line inside
    # the text is the text's fault, not a signature line that lacks its em dash.
    note = _note()
    body, _, sigs = note.partition(b"\n\n")
    origin, _, rest = body.partition(b"\n")
    with pytest.raises(NoteError) as caught:
        parse_checkpoint(origin + b"\n\n" + rest + b"\n\n" + sigs)
    assert (caught.value.code, caught.value.detail) == (
        "note-malformed",
        "control characters or blank lines in the note",
    )


def test_a_note_whose_text_is_empty_is_not_a_checkpoint() -> None:
    # The blank line is the note's first bytes: there is a split, and an empty text.
    _, _, sigs = _note().partition(b"\n\n")
    with pytest.raises(NoteError) as caught:
        parse_checkpoint(b"\n\n" + sigs)
    assert caught.value.code == "checkpoint-malformed"
    assert caught.value.detail.startswith("a checkpoint is origin, size and root hash")
