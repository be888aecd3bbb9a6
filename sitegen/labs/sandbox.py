"""Confine a lab's process: what it may read, write and reach.

A lab is the author's code, or a notebook from anywhere, run by every build,
often unattended. On Linux 5.13 and newer, Landlock (an unprivileged kernel
sandbox) lets a process give up rights for itself and its children for good:
here, the right to change any file except beneath the lab's own folder and
the devices a program writes to (DEVICES: /dev/null, a terminal, shared
memory; never a disk's), and the right to read any file except those, the course's sources, the Python
it runs with and its installed packages, the system's programs and libraries,
and what site.yaml's `lab_access: read:` adds (`readable`). Not the
project's `.git/`, `.env` or cache, not the teacher's home. Landlock's scopes
(ABI 6) keep it from signalling the build or reaching another program's
abstract sockets. The network is out of reach in a network namespace of its
own (unprivileged where the kernel allows user namespaces), else, with
Landlock ABI 4, through Landlock's TCP rules. Its /dev/shm (where
multiprocessing keeps its semaphores) is a memory file system of its own, in a
mount namespace of its own: what a lab leaves there ends with it. Where none of this exists
(macOS, old kernels) nothing is confined: the build says what was not, and its
check that no source changed while labs ran still catches a lab that writes
into the project.
"""
from __future__ import annotations

import ctypes
import os
import platform
import re
import struct
import sys
from typing import NamedTuple

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
_READ_FILE = (1 << 0) | (1 << 2)                  # execute, read file
_READ_RIGHTS = _READ_FILE | (1 << 3)              # and read a folder's listing
_FILE_RIGHTS = _READ_FILE | (1 << 1) | (1 << 14)  # what a rule on a file (not a folder) may give
_IOCTL_DEV = 1 << 15                              # ABI 5: ioctl on a device (a terminal's, /dev's)
_NET_TCP = (1 << 0) | (1 << 1)                    # ABI 4: bind and connect a TCP port
_SCOPES = (1 << 0) | (1 << 1)                     # ABI 6: abstract unix sockets, signals out of the sandbox
_CLONE_NEWNS, _CLONE_NEWUSER, _CLONE_NEWNET = 0x00020000, 0x10000000, 0x40000000
_MS_NOSUID, _MS_NODEV, _MS_REC, _MS_PRIVATE = 1 << 1, 1 << 2, 1 << 14, 1 << 18

# What of the system a lab reads besides Python and its packages: programs, libraries, fonts, the
# time zone, the dynamic loader's cache, /sys and of /proc its own folder and the machine's figures
# (NumPy and OpenBLAS ask for the processors), never another process's (the build's environ holds its
# tokens). Not /etc as a whole, /home, /root, /tmp, /var or /srv.
SYSTEM = ("/usr", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/sys", "/proc/self", "/proc/cpuinfo",
          "/proc/meminfo", "/proc/stat", "/proc/loadavg", "/proc/filesystems", "/proc/sys", "/etc/ld.so.cache",
          "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/timezone", "/etc/fonts",
          "/etc/mime.types", "/etc/matplotlibrc", "/etc/os-release", "/etc/alternatives", "/etc/nsswitch.conf")
# The devices a lab may read and write: the sinks and sources every program uses, its terminal, and
# shared memory (its own: _unshare). Not the rest of /dev: as root a disk's device reads every file.
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx",
           "/dev/pts", "/dev/shm")


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI version, 0 when there is none."""
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "aarch64"):
        return 0
    version = _libc().syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(version, 0)


def python_paths(root: str) -> list[str]:
    """Where the Python running labs and its installed packages are: its prefixes and the folders of
    sys.path (PYTHONPATH's too), but for the project's folder (`root`: build.py's folder is on sys.path,
    and holds .git/ and .env) and the home folder, or a folder holding either."""
    closed = [os.path.realpath(root), os.path.realpath(os.path.expanduser("~"))]
    found = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    for entry in sys.path:
        real = os.path.realpath(entry or ".")
        if not any(path == real or path.startswith(real.rstrip(os.sep) + os.sep) for path in closed):
            found.add(real)
    return sorted(found)


def _unshare(network: bool) -> tuple[bool, bool]:
    """Move this (single-threaded) process into namespaces of its own: unless `network`, a network
    namespace with only a loopback device, which is down (no address is reachable), and a mount
    namespace whose /dev/shm is a new, empty memory file system, unmounted when the last process in
    it ends. As root directly, else in a user namespace of its own that maps this user to itself.
    Returns whether (the network is out of reach, /dev/shm is its own); False where the kernel refuses."""
    libc = _libc()
    flags = _CLONE_NEWNS | (0 if network else _CLONE_NEWNET)
    user = 0 if os.geteuid() == 0 else _CLONE_NEWUSER
    if libc.unshare(user | flags) != 0:             # a kernel that refuses a mount namespace may still
        flags &= ~_CLONE_NEWNS                      # give a network one
        if flags == 0 or libc.unshare(user | flags) != 0:
            return False, False
    if user:
        uid, gid = os.geteuid(), os.getegid()
        try:
            for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
                with open(f"/proc/self/{name}", "w") as handle:
                    handle.write(text)
        except OSError:
            pass        # the namespace holds: the user maps to nobody, and reads only what others may
    return not network, bool(flags & _CLONE_NEWNS) and _private_shm(libc)


def _private_shm(libc) -> bool:
    """Mount an empty memory file system on /dev/shm, in this process's own mount namespace."""
    if libc.mount(None, b"/", None, ctypes.c_ulong(_MS_REC | _MS_PRIVATE), None) != 0:
        return False        # (the build's mounts must not see it, nor it theirs)
    return os.path.isdir("/dev/shm") and libc.mount(b"tmpfs", b"/dev/shm", b"tmpfs", ctypes.c_ulong(_MS_NOSUID | _MS_NODEV),
                                                   b"mode=1777") == 0


def forget_environment_block() -> None:
    """Zero the environment this process was started with, which /proc/self/environ shows (a lab is a
    fork of the lab host, started with the build's environment: its os.environ is the lab's, but that
    block is still the build's, tokens and all). Call once os.environ holds what the process keeps:
    those live elsewhere."""
    try:
        with open("/proc/self/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[47]), int(fields[48])      # env_start, env_end (fields 50 and 51)
    except (OSError, ValueError, IndexError):
        return
    if 0 < start < end:
        ctypes.memset(start, 0, end - start)


class Access(NamedTuple):
    """What one lab's process may reach and use, as the build sends it to the lab host."""
    readable: tuple[str, ...] | None = None     # paths it may read (readable_paths); None: anything
    network: bool = False                       # whether it may reach the network
    variables: tuple[str, ...] = ()             # environment variables it sees besides the usual
    memory: int = 0                             # bytes it may allocate (labrun.bound_memory); 0: no bound


class Confinement(dict):
    """What confine() could confine: {"writes", "reads", "network", "shm"} -> whether it is."""

    def missing(self) -> list[str]:
        return [what for what in ("writes", "reads", "network", "shm") if not self.get(what)]


def confine(writable: list[str], readable: list[str] | None = None, network: bool = False) -> Confinement:
    """From now on this process (and what it starts) may change files only beneath `writable` and
    DEVICES, read only beneath those and `readable` (None: anything) and, unless `network`, reach no
    network. Returns what of it the machine could confine."""
    done = Confinement(writes=False, reads=False, network=network, shm=not os.path.isdir("/dev/shm"))
    if platform.system() == "Linux":
        unreachable, done["shm"] = _unshare(network)
        done["network"] = network or unreachable
    version = abi_version()
    if version < 1:
        return done
    libc = _libc()
    write = 0
    for since, bits in _WRITE_RIGHTS.items():
        if version >= since:
            write |= bits
    fs = write | (_READ_RIGHTS if readable is not None else 0) | (_IOCTL_DEV if version >= 5 else 0)
    net = _NET_TCP if version >= 4 and not network and not done["network"] else 0
    scoped = _SCOPES if version >= 6 else 0
    attr = struct.pack("=QQQ", fs, net, scoped)[:24 if scoped else 16 if net else 8]   # struct landlock_ruleset_attr
    ruleset = libc.syscall(_CREATE_RULESET, attr, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if ruleset < 0:
        return done
    try:
        rules = {**{path: _READ_RIGHTS for path in readable or ()}, **{path: fs for path in (*writable, *DEVICES)}}
        for path, rights in rules.items():
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue                                        # (a system folder this machine lacks)
            try:
                if not os.path.isdir(f"/proc/self/fd/{fd}"):
                    rights &= _FILE_RIGHTS | _IOCTL_DEV
                rule = struct.pack("=Qi", rights & fs, fd)      # struct landlock_path_beneath_attr (packed)
                if libc.syscall(_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH), rule,
                                ctypes.c_uint32(0)) < 0:
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule({path}): {os.strerror(ctypes.get_errno())}")
            finally:
                os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or \
                libc.syscall(_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) < 0:
            raise OSError(ctypes.get_errno(), f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(ruleset)
    done.update(writes=True, reads=readable is not None, network=done["network"] or bool(net) or network)
    return done


# What of the build's environment a lab keeps: what says how to compute and print (the numerical
# libraries' settings change numbers: OPENBLAS_CORETYPE is set where old OpenBLAS builds compute
# wrong), where programs are, the locale and the time zone. Nothing else: a CI job's tokens, the
# teacher's keys, cloud credentials are no lab's to read, print or send.
KEPT_VARIABLES = re.compile(r"^(PATH|LANG|LANGUAGE|LC_[A-Z]+|TZ|VIRTUAL_ENV|SOURCE_DATE_EPOCH|"
                            r"PYTHONIOENCODING|PYTHONUTF8|PYTHONDONTWRITEBYTECODE|"
                            r"(OPENBLAS|OMP|MKL|NUMEXPR|VECLIB|GOTO|BLIS)_[A-Z0-9_]+)$")
SECRET_LIKE = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|_KEY$|^KEY_|API_?KEY", re.I)


def visible(name: str, declared: tuple[str, ...] = ()) -> bool:
    """Whether a lab sees the build's environment variable `name` (`declared`: site.yaml's
    `lab_access: environment:`)."""
    return name in declared or bool(KEPT_VARIABLES.match(name) and not SECRET_LIKE.search(name))


def lab_environment(environ, home: str, declared: tuple[str, ...] = ()) -> dict[str, str]:
    """The environment a lab runs with: the build's, but for what is `visible`, with HOME its own
    (`home`, a folder of its staging area) so that nothing of the teacher's home is read through it,
    and a fixed PYTHONHASHSEED for the processes it starts."""
    return {**{name: value for name, value in environ.items() if visible(name, declared)}, "HOME": home,
            "PYTHONHASHSEED": "0"}


def readable_paths(root: str, closed: tuple[str, ...] = (), declared: tuple[str, ...] = ()) -> list[str]:
    """What a lab may read: the course's folder but for its hidden files and folders (.git/, .env, a
    .venv's other packages) and `closed` (the cache, the output), the generator, Python and its
    packages, the system's files (SYSTEM) and the folders site.yaml's `lab_access: read:` declares."""
    from ..core.sources import THEME
    closed_names = {os.path.realpath(path) for path in closed} | {os.path.join(os.path.realpath(root), "dist")}
    course = [entry.path for entry in os.scandir(root) if not entry.name.startswith(".")
              and os.path.realpath(entry.path) not in closed_names]
    return [*course, str(THEME.parent), *python_paths(root), *SYSTEM,
            *(os.path.join(root, os.path.expanduser(path)) for path in declared)]
