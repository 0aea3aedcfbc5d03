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

from audit import NoteError
from audit.tlog import (
    Checkpoint,
    NoteKey,
    leaf_hash,
    open_checkpoint,
    origin_for,
    parse_checkpoint,
    sign_checkpoint,
)
from audit.tlog._note import MAX_NOTE_BYTES

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


def _parts() -> tuple[bytes, bytes]:
    """The note's text (with its last LF) and its signature line (with its LF)."""
    text, _, sig = _note().partition(b"\n\n")
    return text + b"\n", sig


def _with_text(text: bytes) -> bytes:
    return text + b"\n" + _parts()[1]


_SIG = _parts()[1]
_SIG_LINE = _SIG.rstrip(b"\n")
_TEXT = _parts()[0]
_ORIGIN, _SIZE, _ROOT = _TEXT.rstrip(b"\n").split(b"\n")


@pytest.mark.parametrize(
    ("note", "code", "detail"),
    [
        (_TEXT + _SIG, "note-malformed", "no blank line between the text and its signatures"),
        (
            _with_text(_ORIGIN + b"\t\n" + _SIZE + b"\n" + _ROOT + b"\n"),
            "note-malformed",
            "control characters or blank lines in the note",
        ),
        (
            _TEXT + b"\n" + _SIG_LINE,
            "note-malformed",
            "the signature lines do not end with a line feed",
        ),
        (
            _TEXT + b"\n" + _SIG_LINE[len("— ".encode()) :] + b"\n",
            "note-malformed",
            "a signature line does not start with an em dash",
        ),
        (
            # an empty line after the last signature: the last blank line is now the note's
            # end, so the real one falls inside the text
            _TEXT + b"\n" + _SIG + b"\n",
            "note-malformed",
            "control characters or blank lines in the note",
        ),
        (
            _TEXT + b"\n" + _SIG_LINE + b" extra\n",
            "note-malformed",
            "a signature line is not '— <name> <base64>'",
        ),
        (
            _TEXT + b"\n" + "— a+b AAAAAAAA\n".encode(),
            "note-malformed",
            "a signature line is not '— <name> <base64>'",
        ),
        (
            _TEXT + b"\n" + "— name AAAAAA==\n".encode(),
            "note-malformed",
            "a signature is too short",
        ),
        (
            _TEXT + b"\n" + "— name AAAA*AAA\n".encode(),
            "note-malformed",
            "a signature is not standard base64",
        ),
        (
            _TEXT + b"\n" + "— name AAAAAB==\n".encode(),
            "note-malformed",
            "a signature is not canonical base64",
        ),
        (
            _TEXT + b"\n" + _SIG * 101,
            "note-malformed",
            "more than 100 signatures",
        ),
        (
            _with_text(_ORIGIN + b"\n" + _SIZE + b"\n"),
            "checkpoint-malformed",
            "a checkpoint is origin, size and root hash (this log uses no extension lines)",
        ),
        (
            _with_text(_TEXT + b"extension\n"),
            "checkpoint-malformed",
            "a checkpoint is origin, size and root hash (this log uses no extension lines)",
        ),
        (
            _with_text(b" " + _TEXT),
            "checkpoint-malformed",
            "the origin line is empty or padded",
        ),
        (
            _with_text(_ORIGIN + b"\n07\n" + _ROOT + b"\n"),
            "checkpoint-malformed",
            "the tree size is not a plain decimal number",
        ),
        (
            _with_text(_ORIGIN + b"\n" + str(1 << 63).encode() + b"\n" + _ROOT + b"\n"),
            "checkpoint-malformed",
            "the tree size is not a plain decimal number",
        ),
        (
            _with_text(_ORIGIN + b"\n" + _SIZE + b"\n" + base64.b64encode(bytes(31)) + b"\n"),
            "checkpoint-malformed",
            "the root hash is not 32 bytes",
        ),
        (
            _with_text(_ORIGIN + b"\n" + _SIZE + b"\n" + _ROOT[:-1] + b"*\n"),
            "note-malformed",  # the base64 check's code, before the checkpoint's own checks
            "the root hash is not standard base64",
        ),
    ],
    ids=[
        "no-blank-line",
        "control-character",
        "no-final-lf",
        "no-em-dash",
        "empty-line-after-signatures",
        "three-fields",
        "plus-in-name",
        "short-blob",
        "not-base64",
        "not-canonical-base64",
        "101-signatures",
        "two-lines",
        "extension-line",
        "padded-origin",
        "leading-zero-size",
        "size-2-to-the-63",
        "31-byte-root",
        "root-not-base64",
    ],
)
def test_each_parse_refusal_has_its_code_and_its_words(note: bytes, code: str, detail: str) -> None:
    with pytest.raises(NoteError) as caught:
        parse_checkpoint(note)
    assert (caught.value.code, caught.value.detail) == (code, detail)


def test_a_note_with_the_most_signatures_allowed_is_read() -> None:
    text, sig = _parts()
    _, _, signatures = parse_checkpoint(text + b"\n" + sig * 100)
    assert len(signatures) == 100


@pytest.mark.parametrize(
    "answer",
    [
        lambda message: bytearray(LOG_KEY.sign(message)),  # right bytes, wrong type
        lambda message: LOG_KEY.sign(message).hex()[:64],  # 64 long, not bytes
        lambda message: LOG_KEY.sign(message) + b"\0",  # a valid signature and one byte more
        lambda message: LOG_KEY.sign(message + b"x"),  # signs something else
    ],
    ids=["bytearray", "str", "65-bytes", "other-message"],
)
def test_a_signer_whose_answer_is_not_a_signature_of_the_text_is_refused(
    answer: object,
) -> None:
    with pytest.raises(NoteError) as caught:
        sign_checkpoint(CHECKPOINT, _raw(LOG_KEY), answer)  # type: ignore[arg-type]
    assert (caught.value.code, caught.value.detail) == (
        "signature-invalid",
        "the signer's signature does not verify",
    )


def test_the_shortest_signature_blob_is_a_key_id_and_one_byte() -> None:
    blob = base64.b64encode(b"\x01\x02\x03\x04\x05").decode()
    _, _, (signature,) = parse_checkpoint(_TEXT + b"\n" + f"— name {blob}\n".encode())
    assert (signature.name, signature.key_id, signature.signature) == (
        "name",
        b"\x01\x02\x03\x04",
        b"\x05",
    )
