"""A Target's attributes and host, as the plugin's users write them, checked by their effect.

`tvm.target.Target(config, host=...)` in each form TVM 0.27 documents (a kind string, a JSON
dict, a Target; the host as an argument, inside the dict, or through `with_host`), read back
through `attrs`, attribute access, `keys` and `host`; then compiled: the host's `mcpu` and
`mattr` are what the compiled host code says it was built for, and `+avx512f` puts 512-bit
registers into its assembly. TVM 0.27 no longer parses "llvm -mcpu=..." strings
(docs: the JSON form), so the options are given as dicts.
"""

import json
import platform

import numpy as np
import pytest
import tvm
from tvm import te
from tvm.target import Target

HOST = {"kind": "llvm", "mcpu": "x86-64", "mattr": ["+avx512f"]}
X86 = platform.machine().lower() in ("x86_64", "amd64")


def test_target_attributes_read_back_through_attrs_and_attribute_access() -> None:
    target = Target({"kind": "llvm", "mcpu": "skylake", "mattr": ["+avx2", "+fma"]})
    assert target.kind.name == "llvm" and list(target.keys) == ["cpu"]
    assert target.attrs["mcpu"] == "skylake" and target.mcpu == "skylake"
    assert list(target.attrs["mattr"]) == ["+avx2", "+fma"] == list(target.mattr)
    assert json.loads(str(target))["mcpu"] == "skylake"
    plain = Target("llvm")
    assert "mcpu" not in plain.attrs and plain.host is None
    with pytest.raises(AttributeError, match="no attribute 'mcpu'"):
        plain.mcpu  # noqa: B018 (the attribute access is the check)
    assert list(Target("cuda").keys) == ["cuda", "gpu"]


@pytest.mark.parametrize(
    "make",
    [
        lambda: Target("cuda", host=HOST),
        lambda: Target("cuda", host=Target(HOST)),
        lambda: Target("cuda", host=json.dumps(HOST)),
        lambda: Target({"kind": "cuda", "host": HOST}),
        lambda: Target("cuda").with_host(HOST),
    ],
    ids=["host-dict", "host-target", "host-json", "host-in-config", "with_host"],
)
def test_target_host_is_kept_with_its_attributes(make: object) -> None:
    target = make()
    assert target.kind.name == "cuda" and "mcpu" not in target.attrs
    assert target.host is not None and target.host.kind.name == "llvm"
    assert target.host.attrs["mcpu"] == "x86-64" and list(target.host.mattr) == ["+avx512f"]
    assert target.host.host is None


def _scale() -> tvm.tirx.PrimFunc:
    a = te.placeholder((1024,), name="A")
    b = te.compute((1024,), lambda i: a[i] * 2.0, name="B")
    return te.create_prim_func([a, b])


def _built_for(lib: tvm.runtime.Module) -> dict:
    """The llvm target the compiled host code says it was built for (what export_library
    reads)."""
    return json.loads(lib.mod.get_function("_get_target_string")())


@pytest.mark.skipif(not X86, reason="the host options checked are x86 ones (mcpu x86-64, avx512f)")
def test_host_attributes_reach_the_compiled_host_code() -> None:
    with_host = tvm.compile(_scale(), target=Target("llvm", host=HOST))
    built = _built_for(with_host)
    assert (built["mcpu"], built["mattr"]) == ("x86-64", ["+avx512f"])
    assert "zmm" in with_host.mod.inspect_source("asm")
    plain = tvm.compile(_scale(), target=Target({"kind": "llvm", "mcpu": "x86-64"}))
    assert _built_for(plain)["mcpu"] == "x86-64" and "mattr" not in _built_for(plain)
    assert "zmm" not in plain.mod.inspect_source("asm")
    # The plain build runs on any x86-64 machine (the avx512f one only where the CPU has it).
    x = np.arange(1024, dtype="float32")
    out = tvm.runtime.empty((1024,), "float32")
    plain(tvm.runtime.tensor(x), out)
    np.testing.assert_array_equal(out.numpy(), x * 2)
