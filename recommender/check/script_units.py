"""The systemd units a script writes and starts: `tee /etc/systemd/system/X.service <<EOF` (or `cat > ... <<EOF`),
then `systemctl enable|start|restart X` (pure: the script's written files and a command's words in, units out)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

# where systemd loads unit files from (systemd.unit(5), Unit File Load Path): system and user search paths
_UNIT_DIRS = (
    "/etc/systemd/system/",
    "/run/systemd/system/",
    "/lib/systemd/system/",
    "/usr/lib/systemd/system/",
    "/usr/local/lib/systemd/system/",
    "/etc/systemd/user/",
    "/.config/systemd/user/",
)
# the systemctl verbs that start a unit, now or at boot (`enable` links it into its WantedBy= target)
_STARTS = frozenset({"start", "restart", "try-restart", "reload-or-restart", "enable", "reenable"})
STARTED = ("systemctl", "start")  # the words of the command standing for a unit the script starts (its text: stdin)


def units_started(argv: Sequence[str], files: Mapping[str, str]) -> list[tuple[str, str]]:
    """(path, text) of each unit file the script wrote (`files`: path -> text) that `systemctl VERB UNIT...` starts:
    a unit named without a suffix is NAME.service (systemctl(1)); a unit file given by its path is that file."""
    if not argv or argv[0].rsplit("/", 1)[-1] != "systemctl":
        return []
    words = [w for w in argv[1:] if not w.startswith("-")]
    if not words or words[0] not in _STARTS:
        return []
    out = []
    for unit in words[1:]:
        name = unit.rsplit("/", 1)[-1]
        name = name if "." in name else f"{name}.service"
        for path, text in files.items():
            in_load_path = any(d in path for d in _UNIT_DIRS) and path.rsplit("/", 1)[-1] == name
            if (in_load_path or path == unit) and (path, text) not in out:
                out.append((path, text))
    return out


def is_started_unit(words: Sequence[str], stdin: str | None) -> bool:
    """A command standing for a unit file the script wrote and starts (its text the command's stdin)."""
    return tuple(words[:2]) == STARTED and len(words) == 3 and stdin is not None
