"""Every llvm target tag builds code for the machine its config names, read from the object file.

The tags come from TVM's own registry (`tvm.target.list_tags()`); for each, a small function is
compiled with `tvm.compile(..., target=Target(tag))` and written as an object file, and its ELF
header (the ELF specification's `e_machine` and class) is compared with
- the tag's `mtriple`, where it names one: aarch64 code for `aarch64-linux-gnu`, 32-bit ARM
  for `armv7l-...`;
- the CPU family its `keys` name (`arm_cpu`, `riscv_cpu`, `x86`): a tag of another family than
  the host's must give that family's code, not the host's (a cross-compile that builds host
  code is what a tag losing its `mtriple` does).

A tag's `mcpu` changed to another CPU of the same family is not judged here: that is the
registry snapshot's drift (tools/registry_snapshot), information for a user's wheel. The
compiles run in one child process (LLVM's cross backends could abort the interpreter).
"""

from __future__ import annotations

import json
import platform

import pytest
import tvm

from tvm_conformance.crash_isolation import run_isolated

# ELF e_machine numbers (the ELF specification / LLVM's BinaryFormat/ELF.h).
EM_386, EM_ARM, EM_X86_64, EM_AARCH64, EM_RISCV = 3, 40, 62, 183, 243
# A triple's architecture -> (e_machine, ELF class in bits), LLVM's triple spelling.
ARCHES = (
    (("aarch64", "arm64"), EM_AARCH64, 64),
    (("arm", "thumb"), EM_ARM, 32),
    (("x86_64", "amd64"), EM_X86_64, 64),
    (("i386", "i486", "i586", "i686"), EM_386, 32),
    (("riscv64",), EM_RISCV, 64),
    (("riscv32",), EM_RISCV, 32),
)
# A tag's CPU-family key -> the machines of that family.
FAMILIES = {
    "arm_cpu": {EM_ARM, EM_AARCH64},
    "riscv_cpu": {EM_RISCV},
    "x86": {EM_X86_64, EM_386},
}
HOST_FAMILY = {
    "x86_64": "x86",
    "amd64": "x86",
    "i686": "x86",
    "aarch64": "arm_cpu",
    "arm64": "arm_cpu",
    "armv7l": "arm_cpu",
    "riscv64": "riscv_cpu",
}.get(platform.machine().lower())

LLVM_TAGS = sorted(
    name for name, target in (tvm.target.list_tags() or {}).items() if target.kind.name == "llvm"
)

_CHILD = """
import json, sys, tempfile, os
import tvm
from tvm import te
a = te.placeholder((16,), "float32", name="a")
b = te.compute((16,), lambda i: a[i] * 2.0 + 1.0, name="b")
func = te.create_prim_func([a, b])
facts = {}
with tempfile.TemporaryDirectory() as tmp:
    for name in json.loads(%r):
        target = tvm.target.Target(name)
        path = os.path.join(tmp, "code.o")
        tvm.compile(tvm.IRModule({"main": func}), target=target).mod.write_to_file(path)
        with open(path, "rb") as stream:
            head = stream.read(20)
        order = "little" if head[5] == 1 else "big"
        facts[name] = {
            "magic": head[:4].hex(),
            "class": {1: 32, 2: 64}.get(head[4]),
            "machine": int.from_bytes(head[18:20], order),
            "mtriple": str(target.attrs["mtriple"]) if "mtriple" in target.attrs else None,
            "keys": [str(k) for k in target.keys],
        }
print("FACTS " + json.dumps(facts))
"""


@pytest.fixture(scope="module")
def compiled() -> dict[str, dict]:
    """ELF facts of each llvm tag's object file, compiled in one child process."""
    outcome = run_isolated(_CHILD % json.dumps(LLVM_TAGS))
    lines = [line for line in outcome.stdout.splitlines() if line.startswith("FACTS ")]
    assert outcome.returncode == 0 and lines, (
        f"compiling the llvm tags failed (exit {outcome.returncode}): "
        f"{outcome.stderr.strip().splitlines()[-5:]}"
    )
    return json.loads(lines[-1][len("FACTS ") :])


def _arch(triple: str) -> tuple[int, int] | None:
    arch = triple.split("-")[0].lower()
    for prefixes, machine, bits in ARCHES:
        if any(arch == p or (p in ("arm", "thumb") and arch.startswith(p)) for p in prefixes):
            return machine, bits
    return None


def test_the_registry_has_llvm_tags_of_other_machines() -> None:
    # The cases below are the registry's own tags: an empty or host-only list checks nothing.
    families = {
        key for name in LLVM_TAGS for key in tvm.target.Target(name).keys if key in FAMILIES
    }
    assert len(LLVM_TAGS) >= 2 and len(families - {HOST_FAMILY}) >= 1, (LLVM_TAGS, families)


@pytest.mark.parametrize("tag", LLVM_TAGS)
def test_tag_builds_code_for_its_triple_and_family(tag: str, compiled: dict[str, dict]) -> None:
    facts = compiled[tag]
    assert facts["magic"] == "7f454c46", f"{tag}: the object file is not ELF ({facts['magic']})"
    checked = False
    if facts["mtriple"]:
        expected = _arch(facts["mtriple"])
        if expected is not None:
            assert (facts["machine"], facts["class"]) == expected, (
                f"{tag}: mtriple {facts['mtriple']} means ELF machine {expected[0]}, "
                f"{expected[1]}-bit; the code is machine {facts['machine']}, {facts['class']}-bit"
            )
            checked = True
    family = next((k for k in facts["keys"] if k in FAMILIES), None)
    if family is not None and family != HOST_FAMILY:
        assert facts["machine"] in FAMILIES[family], (
            f"{tag}: an {family} tag (keys {facts['keys']}) built code for ELF machine "
            f"{facts['machine']} (the host is {platform.machine()}): its config "
            f"{'names mtriple ' + facts['mtriple'] if facts['mtriple'] else 'names no mtriple'}"
        )
        checked = True
    if not checked:
        pytest.skip(
            f"{tag}: no mtriple of a known architecture and no CPU family other than the "
            f"host's ({HOST_FAMILY}) in its keys {facts['keys']}: it builds host code by design"
        )
