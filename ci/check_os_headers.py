#!/usr/bin/env python3
"""One OS layer: operating-system headers only in the files that are the layer.

libhurray makes every system call in reference/src/os_posix.c (POSIX: Linux,
macOS, the BSDs) or reference/src/os_win32.c (Windows), behind
reference/src/os.h. This check fails when any other C file of the library or of
the Python extension (python/src/hurray) includes an operating-system header:
POSIX headers (<unistd.h>, <fcntl.h>, <poll.h>, <sys/...>, <pthread.h>, ...)
outside os_posix.c, Windows headers (<windows.h>, <io.h>, <winsock2.h>, ...)
outside os_win32.c, Apple headers (<mach/...>) anywhere. ISO C headers
(<stdio.h>, <time.h>, <signal.h>, ...) are portable and allowed everywhere.

    check_os_headers.py [--pending FILE ...]

--pending names files known to be on their way to the OS layer: their headers
are listed (not an error), and a pending file that is already clean is an error
(drop it from the list, so that `make cross-windows` compiles it).
Exit status 0 when clean, 1 otherwise. Standard library only.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCANNED = [ROOT / "reference" / "src", ROOT / "python" / "src" / "hurray"]
POSIX_LAYER = ROOT / "reference" / "src" / "os_posix.c"
WIN32_LAYER = ROOT / "reference" / "src" / "os_win32.c"

POSIX = re.compile(
    r"^(unistd|fcntl|poll|pthread|dirent|dlfcn|termios|pwd|grp|sched|semaphore|spawn|"
    r"strings|libgen|glob|fnmatch|netdb|syslog|aio|mqueue|regex|utime|wordexp|ftw|"
    r"ifaddrs|langinfo|nl_types|sys/.*|netinet/.*|arpa/.*|net/.*|linux/.*|asm/.*|"
    r"bits/.*|features|alloca|malloc|execinfo|err|paths|endian|byteswap)\.h$"
)
WINDOWS = re.compile(
    r"^(windows|winbase|windef|winnt|winsock2?|ws2tcpip|ws2def|mswsock|io|direct|process|"
    r"share|fileapi|handleapi|synchapi|processthreadsapi|errhandlingapi|memoryapi|"
    r"sysinfoapi|minwindef|minwinbase|winerror|bcrypt|ntstatus|winternl|winioctl|"
    r"shlwapi|shlobj|objbase|wincrypt|intrin|conio|afunix)\.h$",
    re.IGNORECASE,
)
APPLE = re.compile(r"^(mach|mach-o|libkern|CoreFoundation|dispatch)/.*\.h$")
INCLUDE = re.compile(r"^\s*#\s*include\s*<([^>]+)>", re.MULTILINE)


def offending(path: Path) -> list[str]:
    """The OS headers `path` includes that its file may not."""
    text = path.read_text(encoding="utf-8", errors="replace")
    bad = []
    for header in INCLUDE.findall(text):
        if POSIX.match(header) and path != POSIX_LAYER:
            bad.append(header)
        elif WINDOWS.match(header) and path != WIN32_LAYER:
            bad.append(header)
        elif APPLE.match(header):
            bad.append(header)
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pending", nargs="*", default=[], metavar="FILE")
    args = ap.parse_args()
    pending = {(ROOT / p).resolve() for p in args.pending}
    for p in sorted(pending):
        if not p.is_file():
            print(f"check_os_headers: pending file {p.relative_to(ROOT)} does not exist")
            return 1

    failures = 0
    checked = 0
    for top in SCANNED:
        for path in sorted(top.rglob("*")):
            if path.suffix not in (".c", ".h") or not path.is_file():
                continue
            checked += 1
            rel = path.relative_to(ROOT)
            bad = offending(path)
            if path.resolve() in pending:
                if bad:
                    print(f"pending  {rel}: {', '.join(sorted(set(bad)))}")
                else:
                    print(f"FAIL     {rel}: no OS header left; remove it from the pending "
                          "list (OS_PORT_PENDING in the Makefile)")
                    failures += 1
            elif bad:
                print(f"FAIL     {rel}: includes {', '.join(sorted(set(bad)))}; system calls "
                      "belong in reference/src/os_posix.c / os_win32.c (os.h)")
                failures += 1
    print(f"check_os_headers: {checked} files, {len(pending)} pending, {failures} failing")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
