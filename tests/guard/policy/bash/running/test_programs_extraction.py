"""Archive extraction and ``patch`` in the bash analysis.

Extracting writes files whose names come from the archive, not from the command, so it asks
(``opaque-write``); listing, testing or printing an archive and ``patch --dry-run`` do not.
"""

from __future__ import annotations

import pytest

from guard._policy.bash.walker import analyze


def findings(command: str) -> list[tuple[str, str]]:
    return [(f.check, f.detail) for f in analyze(command, cwd="/w", home="/h").findings]


def opaque_write(program: str) -> list[tuple[str, str]]:
    return [("opaque-write", f"{program} writes files named inside the archive or patch")]


@pytest.mark.parametrize(
    ("command", "program"),
    [
        ("tar xf a.tar", "tar"),
        ("tar xzvf a.tgz", "tar"),
        ("gtar xf a.tar", "gtar"),
        ("bsdtar xf a.tar", "bsdtar"),
        ("tar -xf a.tar", "tar"),
        ("tar -C out -xzf a.tgz", "tar"),
        ("tar --extract -f a.tar", "tar"),
        ("tar --get -f a.tar", "tar"),
        ("unzip a.zip", "unzip"),
        ("unzip -o a.zip -d out", "unzip"),
        ("7z x a.7z", "7z"),
        ("7z e a.7z", "7z"),
        ("7za x a.7z", "7za"),
        ("7zr e a.7z", "7zr"),
        ("cpio -i < a.cpio", "cpio"),
        ("cpio -idmv < a.cpio", "cpio"),
        ("cpio --extract < a.cpio", "cpio"),
        ("ar x lib.a", "ar"),
        ("ar xv lib.a", "ar"),
        ("patch -p1 < fix.diff", "patch"),
        ("patch", "patch"),
    ],
)
def test_extraction_writes_names_from_the_archive(command: str, program: str) -> None:
    assert findings(command) == opaque_write(program)


@pytest.mark.parametrize(
    "command",
    [
        "tar tf a.tar",
        "gtar tf a.tar",
        "bsdtar tf a.tar",
        "tar -tf box.tar",  # an 'x' in a file name is not the x operation
        "tar -tvf a.tar --exclude=x",
        "tar --exclude=foo -tf a.tar",
        "tar -cf out.tar dir",
        "tar",
        "unzip -l a.zip",
        "unzip -t a.zip",
        "unzip -v a.zip",
        "unzip -Z a.zip",
        "unzip -p a.zip f",
        "unzip -c a.zip",
        "unzip -z a.zip",
        "7z l a.7z",
        "7za l a.7z",
        "7zr t a.7z",
        "7z a out.7z dir",
        "cpio -o < list",
        "cpio -t --file=a.cpio",
        "cpio -t < a.cpio",
        "ar t lib.a",
        "ar rcs lib.a a.o",
        "patch --dry-run -p1 < fix.diff",
    ],
)
def test_listing_testing_or_creating_an_archive_has_no_finding(command: str) -> None:
    assert findings(command) == []
