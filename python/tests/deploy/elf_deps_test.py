"""The C++ tests that run exported modules need only tvm-ffi and the TVM runtime.

Reads the ELF dynamic section of each gtest binary (DT_NEEDED, DT_RUNPATH) in Python, with no
readelf or ldd, and follows the TVM libraries it needs through its run path: nothing in that
closure is TVM's compiler library.
"""

import os
import struct

import pytest

from tvm_conformance import deploy
from tvm_conformance.runfiles import rlocation

BINARIES = ("cpp/tests/vm_exported_module_test", "cpp/tests/deploy_vm_test_llvm")
DT_NEEDED, DT_STRTAB, DT_RPATH, DT_RUNPATH = 1, 5, 15, 29
PT_LOAD, PT_DYNAMIC = 1, 2


def dynamic_entries(path: str) -> tuple[list[str], list[str]]:
    """(DT_NEEDED names, run path entries) of a 64-bit little-endian ELF file."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError(f"{path} is not a 64-bit little-endian ELF file")
    (phoff,) = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    loads, dynamic = [], None
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz, _, _ = struct.unpack_from(
            "<IIQQQQQQ", data, phoff + i * phentsize
        )
        if p_type == PT_LOAD:
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == PT_DYNAMIC:
            dynamic = (p_offset, p_filesz)
    if dynamic is None:
        return [], []
    entries = []
    for pos in range(dynamic[0], dynamic[0] + dynamic[1], 16):
        tag, value = struct.unpack_from("<qQ", data, pos)
        if tag == 0:
            break
        entries.append((tag, value))
    strtab_addr = next(v for t, v in entries if t == DT_STRTAB)
    strtab = next(
        off + strtab_addr - va for va, off, size in loads if va <= strtab_addr < va + size
    )

    def string(offset: int) -> str:
        end = data.index(b"\0", strtab + offset)
        return data[strtab + offset : end].decode()

    needed = [string(v) for t, v in entries if t == DT_NEEDED]
    runpath = [p for t, v in entries if t in (DT_RPATH, DT_RUNPATH) for p in string(v).split(":")]
    return needed, runpath


def tvm_closure(path: str) -> dict[str, str]:
    """Every libtvm* library `path` needs, directly or through one it needs: name -> file."""
    found: dict[str, str] = {}
    pending = [os.path.realpath(path)]
    while pending:
        current = pending.pop()
        needed, runpath = dynamic_entries(current)
        origin = os.path.dirname(current)
        # The dynamic loader's order: LD_LIBRARY_PATH (set by the GPU-runner bundle), then the
        # run path (Bazel's _solib directories).
        dirs = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep) if d]
        dirs += [entry.replace("$ORIGIN", origin) for entry in runpath]
        for name in needed:
            if not name.startswith("libtvm") or name in found:
                continue
            hits = [os.path.join(d, name) for d in dirs if os.path.exists(os.path.join(d, name))]
            where = f"neither LD_LIBRARY_PATH nor its run path {runpath} holds it"
            assert hits, f"{current} needs {name}: {where}"
            found[name] = os.path.realpath(hits[0])
            pending.append(found[name])
    return found


@pytest.mark.parametrize("binary", BINARIES)
def test_binary_needs_only_ffi_and_runtime(binary: str) -> None:
    needed, _ = dynamic_entries(rlocation(binary))

    tvm_needed = sorted(name for name in needed if name.startswith("libtvm"))
    assert tvm_needed == ["libtvm_ffi.so", "libtvm_runtime.so"]


@pytest.mark.parametrize("binary", BINARIES)
def test_no_compiler_library_in_the_load_closure(binary: str) -> None:
    closure = tvm_closure(rlocation(binary))

    assert set(closure) == {"libtvm_ffi.so", "libtvm_runtime.so"}
    assert not [n for n in closure if n.startswith(deploy.COMPILER_LIBRARIES)]


def test_reader_rejects_a_file_that_is_not_elf(tmp_path: "os.PathLike[str]") -> None:
    bogus = os.path.join(tmp_path, "not_elf.so")
    with open(bogus, "wb") as f:
        f.write(b"#!/bin/sh\n")

    with pytest.raises(ValueError, match="not a 64-bit little-endian ELF"):
        dynamic_entries(bogus)
