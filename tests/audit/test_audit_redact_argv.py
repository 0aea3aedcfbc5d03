"""Issue 13 item 6: secrets that reached ``audit.jsonl`` in clear, now redacted.

Each case is a command a preview was taken from; the secret part must be gone from the
preview and from the bytes of the log, and the rest of the command must still be there.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from audit.log import REDACTED, AuditLog, redact_preview
from tests.audit.audit_testkit import FixedSigner, executed

# Fake values, built from pieces so no scanner takes this file for a leak.
STRIPE = "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc" + "Xy9Kq2LmN0pQrStUvWx"
GITHUB = "ghp_" + "R3aL1sTiCsHaPe0fAgItHuBtOkEn12345678"

CASES = [
    # (command, secret, what must survive)
    ("TOKEN=$'s3cr\\'et value' make deploy", "s3cr", "make deploy"),
    ("export API_TOKEN=$'quokka\\x41zebra' && ./run", "quokka", "./run"),
    ('DB_PASSWORD="two words" ./migrate', "two words", "./migrate"),
    ("mysql -pPASSw0rd -u root prod", "PASSw0rd", "-u root prod"),
    ("mysqldump -u admin -p'quoted pass' db", "quoted pass", "mysqldump -u admin -p"),
    ("curl -u alice:Wonderland42 https://api.example.com", "Wonderland42", "curl -u alice:"),
    ("curl --user alice:Wonderland42 -X POST https://x", "Wonderland42", "-X POST"),
    ("curl -ualice:Wonderland42 https://x", "Wonderland42", "https://x"),
    ("sshpass -p 'hunter2!' ssh deploy@host uptime", "hunter2!", "ssh deploy@host uptime"),
    ("sshpass -phunter2 ssh host", "hunter2", "ssh host"),
    ("sudo -u app sshpass -p hunter2 rsync a b", "hunter2", "rsync a b"),
    ("stripe charges list --api-key " + STRIPE, "4eC39HqLyjWDarjtT1zdp7dc", "stripe charges"),
    ("echo " + STRIPE + " | pbcopy", STRIPE[8:], "| pbcopy"),
    ("git push https://" + GITHUB + "@github.com/o/r.git", GITHUB, "git push"),
    ("psql postgres://app:pg-Secret-9@db:5432/app", "pg-Secret-9", "psql postgres://app:"),
    ("docker login -u bot -p dckr-pw-123 registry.example", "dckr-pw-123", "docker login"),
    ("redis-cli -a r3dis-pass ping", "r3dis-pass", "ping"),
    ("ldapsearch -x -D cn=admin -w LdapPw99 -b dc=x", "LdapPw99", "-b dc=x"),
    ("openssl rsa -in k.pem -passin pass:OpenSslPw -out k2.pem", "OpenSslPw", "-out k2.pem"),
    ("7z x -pArchivePw archive.7z", "ArchivePw", "archive.7z"),
]


@pytest.mark.parametrize(("command", "secret", "kept"), CASES)
def test_command_line_secrets_are_redacted(command: str, secret: str, kept: str) -> None:
    out = redact_preview(command, limit=200)
    assert secret not in out, out
    assert REDACTED in out
    assert kept in out, out
    assert redact_preview(out, limit=200) == out  # still a fixed point


@pytest.mark.parametrize(
    "command",
    [
        "docker run -p 8080:80 nginx",
        "ssh -p 2222 host",
        "mysql -p -u root",
        "curl -u alice https://x",
        "zip -r out.zip src",
        "grep -p pattern file",
        "git log -p -1",
    ],
)
def test_look_alike_options_are_left_alone(command: str) -> None:
    assert redact_preview(command, limit=200) == command


def test_the_log_never_holds_them(tmp_path: Path) -> None:
    signer = FixedSigner(b"\x07" * 32)
    path = tmp_path / "audit.jsonl"
    with AuditLog.open(path, signer, signer.keys) as log:
        for i, (command, _, _) in enumerate(CASES):
            log.append("tool.executed", {**executed(f"c{i}"), "preview": command})
    # Only what the records say (hashes in the chain are hex and may hold any short text).
    lines = path.read_text("utf-8").splitlines()[1:]  # after the log's opening record
    said = [json.dumps(json.loads(line)["data"]) for line in lines]
    assert len(said) == len(CASES)
    for (command, secret, _), data in zip(CASES, said, strict=True):
        assert secret not in data, command
