"""The bus directory: where the broker's IPC sockets are, and the rule `kinesia` applies before it
uses one (BusAddress.prepare() in Sources/KinesiaClient).

    from kinesia.bus import default_bus_directory, prepare_bus_directory
    directory = prepare_bus_directory(os.environ.get("KINESIA_BUS") or default_bus_directory())
    socket.connect(f"ipc://{directory}/sub.sock")
"""

from __future__ import annotations

import os
from typing import Mapping, NoReturn


class BusDirectoryError(Exception):
    """A bus directory that must not be trusted; the message says what to set."""


BUS_FILES = ("pub.sock", "sub.sock", "broker.lock")


def default_bus_directory(environ: Mapping[str, str] | None = None) -> str:
    """$XDG_RUNTIME_DIR/kinesia when XDG_RUNTIME_DIR is an absolute path, else /tmp/kinesia-<uid>."""
    environ = os.environ if environ is None else environ
    runtime = environ.get("XDG_RUNTIME_DIR", "")
    return os.path.join(runtime, "kinesia") if runtime.startswith("/") else f"/tmp/kinesia-{os.getuid()}"


def prepare_bus_directory(directory: str) -> str:
    """Makes `directory` (mode 0700) if missing, else checks it, as `kinesia` does.

    Refuses (BusDirectoryError) a symbolic link, anything but a directory, a directory of
    another user or with group/other permissions, and a link or foreign or loose file among the
    broker's files. Never changes an existing directory. Returns the directory.
    """
    import stat

    def refuse(reason: str) -> NoReturn:
        raise BusDirectoryError(
            f"cannot use bus directory {directory}: {reason}; use a directory of your own with "
            "mode 0700 (--bus DIR, or set KINESIA_BUS or XDG_RUNTIME_DIR)")

    def check(path: str, info: os.stat_result) -> None:
        if stat.S_ISLNK(info.st_mode):
            refuse(f"{path} is a symbolic link (links are not followed there)")
        if info.st_uid != os.geteuid():
            refuse(f"{path} is owned by uid {info.st_uid}, not by uid {os.geteuid()} (you)")
        if info.st_mode & 0o077:
            refuse(f"{path} has mode 0{stat.S_IMODE(info.st_mode):o}: other users may reach it")

    created = False
    try:
        os.makedirs(os.path.dirname(directory) or "/", mode=0o700, exist_ok=True)
        os.mkdir(directory, 0o700)
        created = True
    except FileExistsError:
        pass
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        info = os.lstat(directory) if os.path.lexists(directory) else None
        if info is not None and stat.S_ISLNK(info.st_mode):
            refuse(f"{directory} is a symbolic link (links are not followed there)")
        refuse(f"{directory}: {error.strerror}")
    try:
        info = os.fstat(fd)
        if info.st_uid != os.geteuid():
            refuse(f"{directory} is owned by uid {info.st_uid}, not by uid {os.geteuid()} (you)")
        if created:
            os.fchmod(fd, 0o700)
        else:
            check(directory, info)
        for name in BUS_FILES:
            try:
                entry = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                continue
            check(os.path.join(directory, name), entry)
    finally:
        os.close(fd)
    return directory
