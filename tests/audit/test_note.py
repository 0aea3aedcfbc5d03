"""C2SP signed-note checkpoints: signing, strict parsing, and every way a note is refused."""

from __future__ import annotations

import base64
import hashlib

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

SEED = bytes(range(32))
KEY = Ed25519PrivateKey.from_private_bytes(SEED)
PUBLIC = KEY.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
ORIGIN = origin_for("log_abcdefghijklmnopqrstuv")
CHECKPOINT = Checkpoint(ORIGIN, 42, leaf_hash(b"root"))


def _note(checkpoint: Checkpoint = CHECKPOINT) -> bytes:
    return sign_checkpoint(checkpoint, PUBLIC, KEY.sign)


def _key() -> NoteKey:
    return NoteKey.for_public(ORIGIN, PUBLIC)


def test_note_layout_is_c2sp() -> None:
    note = _note()
    text, _, sig = note.partition(b"\n\n")
    assert text.split(b"\n") == [
        ORIGIN.encode(),
        b"42",
        base64.b64encode(CHECKPOINT.root),
    ]
    assert sig.startswith("\u2014 ".encode() + ORIGIN.encode() + b" ")
    blob = base64.b64decode(sig.split(b" ")[2])
    expected_id = hashlib.sha256(ORIGIN.encode() + b"\n\x01" + PUBLIC).digest()[:4]
    assert blob[:4] == expected_id
    KEY.public_key().verify(blob[4:], text + b"\n")


def test_round_trip_with_a_vkey_and_with_a_keyring() -> None:
    key = _key()
    assert NoteKey.from_vkey(key.vkey()) == key
    opened = open_checkpoint(_note(), [NoteKey.from_vkey(key.vkey())])
    assert opened.checkpoint == CHECKPOINT
    assert opened.signer == key
    assert open_checkpoint(_note(), {"k": KEY.public_key()}, origin=ORIGIN).checkpoint.size == 42


def test_vkey_layout() -> None:
    name, hex_id, blob = _key().vkey().split("+", 2)
    assert name == ORIGIN
    assert len(hex_id) == 8
    assert base64.b64decode(blob) == b"\x01" + PUBLIC


@pytest.mark.parametrize(
    "vkey",
    [
        "",
        "name+00000000",
        "na me+00000000+AQ==",
        f"{ORIGIN}+00000000+" + base64.b64encode(b"\x01" + PUBLIC).decode(),  # wrong id
        f"{ORIGIN}+{_key().key_id.hex()}+" + base64.b64encode(b"\x02" + PUBLIC).decode(),
        f"{ORIGIN}+{_key().key_id.hex()}+" + base64.b64encode(b"\x01" + PUBLIC[:31]).decode(),
        f"{ORIGIN}+{_key().key_id.hex()}+!!!",
    ],
)
def test_bad_vkeys_are_refused(vkey: str) -> None:
    with pytest.raises(NoteError) as caught:
        NoteKey.from_vkey(vkey)
    assert caught.value.code == "vkey-malformed"


def _resign(text: bytes) -> bytes:
    key = _key()
    sig = KEY.sign(text)
    return (
        text
        + b"\n\xe2\x80\x94 "
        + ORIGIN.encode()
        + b" "
        + base64.b64encode(key.key_id + sig)
        + b"\n"
    )


ROOT_B64 = base64.b64encode(CHECKPOINT.root)


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (ORIGIN.encode() + b"\n042\n" + ROOT_B64 + b"\n", "checkpoint-malformed"),
        (ORIGIN.encode() + b"\n-1\n" + ROOT_B64 + b"\n", "checkpoint-malformed"),
        (ORIGIN.encode() + b"\n4 2\n" + ROOT_B64 + b"\n", "checkpoint-malformed"),
        (ORIGIN.encode() + b"\n99999999999999999999\n" + ROOT_B64 + b"\n", "checkpoint-malformed"),
        (ORIGIN.encode() + b"\n42\n" + base64.b64encode(b"x" * 31) + b"\n", "checkpoint-malformed"),
        (ORIGIN.encode() + b"\n42\n" + ROOT_B64 + b"\nextension\n", "checkpoint-malformed"),
        (ORIGIN.encode() + b"\n42\n", "checkpoint-malformed"),
        (b"\n42\n" + ROOT_B64 + b"\n", "checkpoint-malformed"),
        (b" " + ORIGIN.encode() + b"\n42\n" + ROOT_B64 + b"\n", "checkpoint-malformed"),
        (ORIGIN.encode() + b"\n42\n" + ROOT_B64.rstrip(b"=") + b"\n", "note-malformed"),
        (ORIGIN.encode() + b"\r\n42\n" + ROOT_B64 + b"\n", "note-malformed"),
        (ORIGIN.encode() + b"\x00\n42\n" + ROOT_B64 + b"\n", "note-malformed"),
    ],
)
def test_malformed_checkpoints_are_refused_even_when_signed(text: bytes, code: str) -> None:
    with pytest.raises(NoteError) as caught:
        open_checkpoint(_resign(text), [_key()])
    assert caught.value.code == code


def test_every_signature_line_defect_is_refused() -> None:
    note = _note()
    text, _, sig = note.partition(b"\n\n")
    cases = {
        "no final newline": note[:-1],
        "no blank line": text + b"\n" + sig,
        "ascii dash": text + b"\n\n- " + sig[4:],
        "no signature": text + b"\n\n",
        "bad base64": text + b"\n\n" + sig.replace(b"=", b"") + b"",
        "three fields": text + b"\n\n" + sig[:-1] + b" extra\n",
        "not utf-8": note.replace(b"42", b"4\xff"),
        "too large": note + b"\xe2\x80\x94 x " + b"A" * 70000 + b"\n",
    }
    for name, bad in cases.items():
        with pytest.raises(NoteError, match="malformed"):
            parse_checkpoint(bad)
        assert name


def test_a_flipped_root_or_size_breaks_the_signature() -> None:
    note = _note()
    edited = note.replace(b"\n42\n", b"\n43\n")
    with pytest.raises(NoteError) as caught:
        open_checkpoint(edited, [_key()])
    assert caught.value.code == "signature-invalid"


def test_unknown_signers_are_ignored_but_one_trusted_signature_is_needed() -> None:
    other = Ed25519PrivateKey.generate()
    other_pub = other.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    witness = NoteKey.for_public("witness.example/w1", other_pub)
    note = _note()
    text = note.partition(b"\n\n")[0] + b"\n"
    cosig = base64.b64encode(witness.key_id + other.sign(text))
    cosigned = note + b"\xe2\x80\x94 witness.example/w1 " + cosig + b"\n"
    assert open_checkpoint(cosigned, [_key()]).checkpoint == CHECKPOINT
    with pytest.raises(NoteError) as caught:
        open_checkpoint(note, [NoteKey.for_public(ORIGIN, other_pub)])
    assert caught.value.code == "no-trusted-signature"
    # the right key id under another name is no signature of the log
    with pytest.raises(NoteError):
        open_checkpoint(note, [NoteKey.for_public("other", PUBLIC)])


def test_origin_is_checked_when_given() -> None:
    with pytest.raises(NoteError) as caught:
        open_checkpoint(_note(), [_key()], origin=origin_for("log_other"))
    assert caught.value.code == "origin-mismatch"


def test_a_signer_that_signs_something_else_is_refused() -> None:
    with pytest.raises(NoteError) as caught:
        sign_checkpoint(CHECKPOINT, PUBLIC, lambda message: KEY.sign(message + b"x"))
    assert caught.value.code == "signature-invalid"


def _note_error(call: object) -> tuple[str, str]:
    try:
        call()  # type: ignore[operator]
    except NoteError as exc:
        return exc.code, exc.detail
    raise AssertionError("no NoteError")


def test_every_vkey_and_origin_refusal_has_its_code_and_its_words() -> None:
    key = _key()
    b64 = base64.b64encode(b"\x01" + PUBLIC).decode()
    expected = {
        "two parts": (f"{ORIGIN}+{key.key_id.hex()}", "a vkey is <name>+<key id>+<base64 key>"),
        "bad name": (
            f"na me+{key.key_id.hex()}+{b64}",
            "a vkey is <name>+<key id>+<base64 key>",
        ),
        "not base64": (
            f"{ORIGIN}+{key.key_id.hex()}+!!!!",
            "the vkey's key is not standard base64",
        ),
        "not canonical": (
            f"{ORIGIN}+{key.key_id.hex()}+AR==",  # 0x01 with stray low bits
            "the vkey's key is not canonical base64",
        ),
        "not ed25519": (
            f"{ORIGIN}+{key.key_id.hex()}+" + base64.b64encode(b"\x02" + PUBLIC).decode(),
            "the vkey is not an Ed25519 key (type 0x01)",
        ),
        "other id": (f"{ORIGIN}+00000000+{b64}", "the vkey's key id does not match its key"),
    }
    for name, (vkey, words) in expected.items():
        assert _note_error(lambda v=vkey: NoteKey.from_vkey(v)) == ("vkey-malformed", words), name
    assert _note_error(lambda: open_checkpoint(_note(), [key], origin="other")) == (
        "origin-mismatch",
        "the checkpoint is of another log",
    )
    assert _note_error(lambda: NoteKey.for_public("a b", PUBLIC)) == (
        "vkey-malformed",
        "a key name has no spaces or '+', a key 32 bytes",
    )


def test_vkey_text_is_exactly_name_id_and_base64() -> None:
    key = _key()
    assert key.vkey() == (
        f"{ORIGIN}+{key.key_id.hex()}+" + base64.b64encode(b"\x01" + PUBLIC).decode("ascii")
    )
