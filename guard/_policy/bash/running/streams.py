"""What a pipeline feeds a command: code from a downloader, or the static text of ``echo``."""

from __future__ import annotations

from collections.abc import Sequence

from guard._policy.bash.model import Command

__all__ = ["from_downloader", "static_output"]


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_DOWNLOADERS = _set("curl wget fetch http https xh aria2c lwp-request")
_ECHOERS = frozenset({"echo", "printf"})


def from_downloader(producers: Sequence[Command], depth: int = 0) -> bool:
    for producer in producers:
        if producer.program in _DOWNLOADERS:
            return True
        if depth < 8 and from_downloader(producer.producers, depth + 1):
            return True
        for word in producer.argv:
            if word.inner and from_downloader(word.inner, depth + 1):
                return True
    return False


def static_output(producers: Sequence[Command]) -> str | None:
    """The text ``echo``/``printf``/``cat <<EOF`` producers write, when fully static."""
    if not producers:
        return None
    out: list[str] = []
    for producer in producers:
        program = producer.program
        if program in _ECHOERS and all(w.value is not None for w in producer.args):
            words = [w.value or "" for w in producer.args]
            while words and words[0].startswith("-") and program == "echo":
                words.pop(0)
            out.append(" ".join(words))
        elif program == "cat" and not producer.args and producer.stdin_texts:
            out.extend(producer.stdin_texts)
        else:
            return None
    return "\n".join(out)
