"""Confine a lab's process so that it can write only in its own working folder.

A lab is the author's code, run by every build, often unattended: a stray
`open('../../content/guide.md', 'a')` must not change the project. On Linux
5.13 and newer, Landlock (an unprivileged kernel sandbox) lets a process give
up rights for itself and its children for good: here, the right to create,
change, rename or delete any file except beneath the lab's folder and /dev
(/dev/null, /dev/shm for semaphores). Reading stays free, so imports and
`inputs/` work. Elsewhere (macOS, older kernels) nothing is confined, and the
build's check that no source changed while labs ran is what catches a lab
that writes into the project.
"""
from __future__ import annotations

import ctypes
import os
import platform
import re
import struct

# <linux/landlock.h>: the syscall numbers are the same on x86_64 and arm64.
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
# LANDLOCK_ACCESS_FS_* that change the file system, by the ABI version that introduced them.
_WRITE_RIGHTS = {1: (1 << 1) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 10)
                    | (1 << 11) | (1 << 12),     # write file, remove dir/file, make char/dir/reg/sock/fifo/block/sym
                 2: 1 << 13,                      # refer: link or rename into another folder
                 3: 1 << 14}                      # truncate


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI version, 0 when there is none."""
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "aarch64"):
        return 0
    version = _libc().syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(version, 0)


def confine(writable: list[str]) -> bool:
    """From now on this process (and what it starts) may change files only beneath `writable`.

    Returns False, changing nothing, where Landlock is not available.
    """
    version = abi_version()
    if version < 1:
        return False
    libc = _libc()
    rights = 0
    for since, bits in _WRITE_RIGHTS.items():
        if version >= since:
            rights |= bits
    attr = struct.pack("=Q", rights)                            # struct landlock_ruleset_attr (handled_access_fs)
    ruleset = libc.syscall(_CREATE_RULESET, attr, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if ruleset < 0:
        return False
    try:
        for folder in writable:
            fd = os.open(folder, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = struct.pack("=Qi", rights, fd)           # struct landlock_path_beneath_attr (packed)
                if libc.syscall(_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH), rule,
                                ctypes.c_uint32(0)) < 0:
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule({folder}): {os.strerror(ctypes.get_errno())}")
            finally:
                os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or \
                libc.syscall(_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) < 0:
            raise OSError(ctypes.get_errno(), f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(ruleset)
    return True


# What of the build's environment a lab keeps: what says how to compute and print (the numerical
# libraries' settings change numbers: OPENBLAS_CORETYPE is set where old OpenBLAS builds compute
# wrong), where programs are, the locale and the time zone. Nothing else: a CI job's tokens, the
# teacher's keys, cloud credentials are no lab's to read, print or send.
KEPT_VARIABLES = re.compile(r"^(PATH|LANG|LANGUAGE|LC_[A-Z]+|TZ|TERM|VIRTUAL_ENV|SOURCE_DATE_EPOCH|PYTHONHASHSEED|"
                            r"PYTHONIOENCODING|PYTHONUTF8|PYTHONDONTWRITEBYTECODE|"
                            r"(OPENBLAS|OMP|MKL|NUMEXPR|VECLIB|GOTO|BLIS)_[A-Z0-9_]+)$")
SECRET_LIKE = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|_KEY$|^KEY_|API_?KEY", re.I)


def lab_environment(environ, home: str) -> dict[str, str]:
    """The environment a lab runs with: the build's, but for what KEPT_VARIABLES keeps, with HOME its own
    (`home`, a folder of its staging area) so that nothing of the teacher's home is read through it."""
    kept = {name: value for name, value in environ.items()
            if KEPT_VARIABLES.match(name) and not SECRET_LIKE.search(name)}
    return {**kept, "HOME": home}
