"""Tests never reach the network: under Bazel a test sees the loopback interface only.

Locally the sandbox gives each test a network namespace of its own
(`--nosandbox_default_allow_network`, tools/build_defs/tvm.bazelrc); on a remote executor the
runner does (tools/remote_exec: bubblewrap's --unshare-net). Nothing here sends any traffic: the
interfaces are read from the kernel. Under plain pytest the process has the machine's network,
so the cases skip, saying so.
"""

import socket
from pathlib import Path

import pytest

from tvm_conformance.runfiles import under_bazel

pytestmark = pytest.mark.skipif(
    not under_bazel(), reason="plain pytest: no sandbox, the machine's network is visible"
)


def test_the_only_interface_is_loopback() -> None:
    names = [name for _, name in socket.if_nameindex()]

    assert names == ["lo"], f"a test can see network interfaces {names}"


def test_proc_net_dev_agrees() -> None:
    # /proc/net/dev: two header lines, then "<name>: <counters>" per interface of this namespace.
    lines = Path("/proc/net/dev").read_text().splitlines()[2:]

    assert [line.split(":")[0].strip() for line in lines] == ["lo"]
