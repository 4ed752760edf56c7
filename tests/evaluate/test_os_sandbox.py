"""The code sandbox's parts: the seccomp process guard (checked instruction by instruction against its rule, for
any syscall and clone flags, on each architecture it knows), the availability check, the modes."""
from __future__ import annotations

import struct
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptweave.errors import CodeSandboxError, PromptweaveWarning
from promptweave.evaluate import os_sandbox

ALLOW, KILL = 0x7FFF0000, 0x80000000
EPERM, ENOSYS = 0x00050000 | 1, 0x00050000 | 38
ARCHES = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
NR = {  # clone, clone3, prctl, refused
    "x86_64": (56, 435, 157, {57, 58, 101, 310, 311, 272, 308, 248, 249, 250, 425}),
    "aarch64": (220, 435, 167, {117, 270, 271, 97, 268, 217, 218, 219, 425}),
}


def run_bpf(prog: bytes, nr: int, arch: int, args: tuple[int, ...]) -> int:
    """A classic-BPF interpreter for the instructions the guard uses, over a ``struct seccomp_data``."""
    data = struct.pack("=iIQ6Q", nr - (1 << 32) if nr >= 1 << 31 else nr, arch, 0, *args)
    insns = [struct.unpack("=HBBI", prog[i:i + 8]) for i in range(0, len(prog), 8)]
    pc, acc = 0, 0
    for _ in range(len(insns) + 1):
        code, jt, jf, k = insns[pc]
        if code == 0x20:  # ld [k]
            acc = struct.unpack_from("=I", data, k)[0]
            pc += 1
        elif code in (0x15, 0x35, 0x45):  # jeq / jge / jset
            hit = acc == k if code == 0x15 else acc >= k if code == 0x35 else bool(acc & k)
            pc += 1 + (jt if hit else jf)
        elif code == 0x06:
            return k
        else:
            raise AssertionError(f"unexpected instruction {code:#x}")
    raise AssertionError("the program did not return")


def rule(machine: str, arch: int, nr: int, flags: int) -> int:
    clone, clone3, prctl, refused = NR[machine]
    if arch != ARCHES[machine]:
        return KILL
    if nr >= 0x40000000 or nr == clone3:
        return ENOSYS
    if nr in refused:
        return EPERM
    if nr == clone:
        return ALLOW if flags & 0x00010000 else EPERM
    if nr == prctl:  # PR_SET_PDEATHSIG would let the code outlive the run
        return EPERM if flags == 1 else ALLOW
    return ALLOW


@settings(max_examples=300, deadline=None)
@given(machine=st.sampled_from(sorted(ARCHES)),
       nr=st.sampled_from([56, 57, 58, 101, 220, 117, 270, 271, 310, 311, 435, 157, 167, 272, 308, 97, 268, 248,
                           249, 250, 217, 218, 219, 425, 0, 1, 59, 0x40000038])
       | st.integers(0, 2**32 - 1),
       flags=st.sampled_from([0x11, 0x3D0F00, 0x01000000 | 0x11, 0x00010000, 1, 2, 4]) | st.integers(0, 2**64 - 1),
       other_arch=st.booleans())
def test_the_guard_follows_its_rule_for_any_syscall(machine: str, nr: int, flags: int, other_arch: bool) -> None:
    arch = 0x40000003 if other_arch else ARCHES[machine]  # i386 when not the native one
    prog = os_sandbox.process_guard(machine)
    assert prog is not None
    assert run_bpf(prog, nr, arch, (flags, 0, 0, 0, 0, 0)) == rule(machine, arch, nr, flags & 0xFFFFFFFF)


def test_an_unknown_architecture_has_no_guard_and_so_no_bwrap_mode() -> None:
    assert os_sandbox.process_guard("sparc64") is None


def test_modes() -> None:
    with pytest.raises(CodeSandboxError) as ei:
        os_sandbox.check_mode("docker")
    assert ei.value.code == "PW631" and "bwrap or rlimits" in str(ei.value)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        os_sandbox.require("rlimits")
    assert [w.category for w in caught] == [PromptweaveWarning]
    assert "WITHOUT OS isolation" in str(caught[0].message) and "environment" in str(caught[0].message)


def test_a_bwrap_that_cannot_make_namespaces_is_refused_with_its_reason(tmp_path, monkeypatch) -> None:
    # a stand-in for bwrap on a machine where user namespaces are off: it fails as bubblewrap does there
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    why = os_sandbox.unavailable_reason()
    assert why is not None and "No permissions to create new namespace" in why
    with pytest.raises(CodeSandboxError) as ei:
        os_sandbox.require("bwrap")
    assert "apt-get install bubblewrap" in str(ei.value) and "--code-sandbox=rlimits" in str(ei.value)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert os_sandbox.unavailable_reason() == "bubblewrap (bwrap) is not installed"


def test_an_older_bubblewrap_gets_only_the_options_it_has(tmp_path) -> None:
    # a stand-in for bubblewrap 0.6 (no --disable-userns, no --size): the seccomp guard refuses unshare/setns instead
    old = tmp_path / "bwrap"
    old.write_text("#!/bin/sh\necho 'usage: bwrap [OPTIONS...] [--] COMMAND [ARGS...]'\necho '    --as-pid-1'\n")
    old.chmod(0o755)
    args = os_sandbox.bwrap_args(str(old), os_sandbox.Jail(), {"PATH": "/usr/bin"}, 3)
    assert "--disable-userns" not in args and "--size" not in args
    assert args[args.index("--seccomp") + 1] == "3" and args[-1] == "--"
    assert args.count("--tmpfs") == 2 and "--as-pid-1" in args
