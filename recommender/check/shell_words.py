"""What a command's words say once expanded (pure): the empty arguments only a variable set outside the file fills,
and its redirections - the file its output goes to, and the words left without them."""

from __future__ import annotations

import re

from recommender.check.shell_expansion import PLACEHOLDER, Word

_REDIRECT = re.compile(r"^(\d*|&)(>>?|<<-?|<|>&|<&)(.*)$", re.S)  # `<<` before `<`: `<< EOF` alone takes the next word


def outside_words(words: list[Word]) -> list[str]:
    """An empty argument only a variable set outside the file fills (`--model "$VLLM_MODEL"` after
    `VLLM_MODEL="${VLLM_MODEL:-}"`) is left as written, as an unset variable is: its names, now unresolved."""
    names = []
    for w in words:
        if w.text == "" and w.empty_from:
            w.text = f"${w.empty_from[0]}"
            names.append(w.text)
    return names


def written_to(words: list[Word]) -> str | None:
    """The file a command's output goes to (`> F`, `>F`, `>> F`), when one does."""
    for k, word in enumerate(words):
        m = _REDIRECT.match(word.text) if word.bare else None
        if m and m.group(1) in ("", "1") and m.group(2) in (">", ">>"):
            return m.group(3) or (words[k + 1].text if k + 1 < len(words) else None)
    return None


def drop_redirections(words: list[Word]) -> list[Word]:
    """`> log 2>&1`, `>/dev/null`, `< in`, `<<EOF` are not arguments of the command."""
    out, skip = [], False
    for word in words:
        if skip:
            skip = False
            continue
        m = _REDIRECT.match(word.text) if word.bare else None
        if m and not PLACEHOLDER.match(word.text):
            skip = m.group(3) == ""
            continue
        out.append(word)
    return out
