"""api_shim: the capabilities rewrite, and byte-for-byte pass-through of everything else.

Runs with the remote-exec venv (grpcio), outside Bazel: `check.sh` runs it first, or
`"$(tools/remote_exec/install.sh)"/bin/python -m unittest tools/remote_exec/api_shim_test.py`.
Every server here listens on 127.0.0.1 with a port the OS picks.
"""

from __future__ import annotations

import hashlib
import os
import sys
import unittest
from collections.abc import Iterator

os.environ.setdefault("GRPC_VERBOSITY", "ERROR")  # no transport chatter from the servers

try:
    import grpc
except ImportError:  # plain pytest over tools/ from the test venv, which has no grpcio
    raise unittest.SkipTest(
        "grpcio is not installed here: run with the remote-exec venv (tools/remote_exec/install.sh)"
    ) from None

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import api_shim  # noqa: E402

# ServerCapabilities as casd sends it, hand-encoded (tag bytes: field << 3 | wire type):
#   cache_capabilities (1) = {digest_functions: [SHA256]}      0a 02 08 01
#   execution_capabilities (2) = {exec_enabled: true}          12 02 10 01
#   deprecated_api_version (3) = {major: 2}                    1a 02 08 02
#   low_api_version (4) = {major: 2, minor: 1}                 22 04 08 02 10 01
#   high_api_version (5) = {major: 2, minor: 12}               2a 04 08 02 10 0c
CASD_ANSWER = bytes.fromhex("0a020801120210011a0208022204080210012a040802100c")
# The same with low_api_version = {major: 2}: the one change Bazel 4 needs.
BAZEL4_ANSWER = bytes.fromhex("0a020801120210011a020802220208022a040802100c")

# Command{arguments: ["sh"], output_files: ["b/out.txt", "a.log"], output_directories: ["d"]}
# (tags 0a, 1a, 22), and the same with 2.1's output_paths (tag 3a) added, sorted.
COMMAND_2_0 = b"\x0a\x02sh\x1a\x09b/out.txt\x1a\x05a.log\x22\x01d"
COMMAND_2_1 = COMMAND_2_0 + b"\x3a\x05a.log\x3a\x09b/out.txt\x3a\x01d"


def varint(value: int) -> bytes:
    """A protobuf varint (values here are under 16384: at most two bytes)."""
    assert value < 1 << 14
    return bytes([value]) if value < 128 else bytes([value & 0x7F | 0x80, value >> 7])


def ld(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return bytes([number << 3 | 2]) + varint(len(payload)) + payload


def digest(blob: bytes) -> bytes:
    """Digest{hash: sha256 hex, size_bytes}, encoded."""
    return ld(1, hashlib.sha256(blob).hexdigest().encode()) + bytes([2 << 3]) + varint(len(blob))


GET_ACTION_RESULT = "/build.bazel.remote.execution.v2.ActionCache/GetActionResult"
READ = "/google.bytestream.ByteStream/Read"
WRITE = "/google.bytestream.ByteStream/Write"


class Upstream(grpc.GenericRpcHandler):
    """A fake REAPI server: fixed answers, NOT_FOUND for the action cache, echoing streams, a
    CAS of `blobs` (sha256 hex -> bytes) and an Execute that records what it was asked."""

    def __init__(self) -> None:
        self.metadata: list[tuple[str, str]] = []
        self.blobs: dict[str, bytes] = {}
        self.executed: list[bytes] = []

    def put(self, blob: bytes) -> bytes:
        self.blobs[hashlib.sha256(blob).hexdigest()] = blob
        return digest(blob)

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        cas = "/build.bazel.remote.execution.v2.ContentAddressableStorage/"
        if details.method == cas + "BatchReadBlobs":

            def read(request: bytes, context: grpc.ServicerContext) -> bytes:
                # Request: instance_name (1), digests (2); each digest is hash (1) first.
                answers = b""
                for item in api_shim._strings(request, 2):
                    name = api_shim._strings(item, 1)[0].decode()
                    if name in self.blobs:
                        answers += ld(1, ld(1, item) + ld(2, self.blobs[name]))
                    else:
                        answers += ld(1, ld(1, item) + ld(3, b"\x08\x05"))  # code NOT_FOUND
                return answers

            return grpc.unary_unary_rpc_method_handler(read)
        if details.method == cas + "BatchUpdateBlobs":

            def update(request: bytes, context: grpc.ServicerContext) -> bytes:
                for item in api_shim._strings(request, 2):
                    self.put(api_shim._strings(item, 2)[0])
                return b""

            return grpc.unary_unary_rpc_method_handler(update)
        if details.method == api_shim.EXECUTE:

            def execute(request: bytes, context: grpc.ServicerContext) -> Iterator[bytes]:
                self.executed.append(request)
                yield b"operation"

            return grpc.unary_stream_rpc_method_handler(execute)
        if details.method == api_shim.CAPABILITIES:
            return grpc.unary_unary_rpc_method_handler(lambda request, context: CASD_ANSWER)
        if details.method == GET_ACTION_RESULT:

            def not_found(request: bytes, context: grpc.ServicerContext) -> bytes:
                self.metadata = list(context.invocation_metadata())
                context.abort(grpc.StatusCode.NOT_FOUND, "no action result for " + request.hex())

            return grpc.unary_unary_rpc_method_handler(not_found)
        if details.method == READ:

            def chunks(request: bytes, context: grpc.ServicerContext) -> Iterator[bytes]:
                yield request
                yield request[::-1]
                context.abort(grpc.StatusCode.DATA_LOSS, "third chunk lost")

            return grpc.unary_stream_rpc_method_handler(chunks)
        if details.method == WRITE:
            return grpc.stream_unary_rpc_method_handler(
                lambda requests, context: b"|".join(requests)
            )
        return None


def _raw(data: bytes) -> bytes:
    return data


class ApiShimTest(unittest.TestCase):
    """The shim between a client and the fake upstream, both on loopback."""

    def setUp(self) -> None:
        self.upstream = Upstream()
        self.server = grpc.server(api_shim.futures.ThreadPoolExecutor(max_workers=4))
        self.server.add_generic_rpc_handlers([self.upstream])
        upstream_port = self.server.add_insecure_port("127.0.0.1:0")
        self.server.start()
        self.shim, shim_port = api_shim.serve("127.0.0.1:0", f"127.0.0.1:{upstream_port}")
        self.channel = grpc.insecure_channel(f"127.0.0.1:{shim_port}")

    def tearDown(self) -> None:
        self.channel.close()
        self.shim.stop(grace=None)
        self.server.stop(grace=None)

    def call(self, kind: str, method: str):  # noqa: ANN201 (a grpc multicallable)
        return getattr(self.channel, kind)(
            method, request_serializer=_raw, response_deserializer=_raw
        )

    def test_rewrite_sets_the_low_version_and_keeps_every_other_byte(self) -> None:
        self.assertEqual(api_shim.rewrite_capabilities(CASD_ANSWER), BAZEL4_ANSWER)

    def test_rewrite_leaves_an_answer_without_a_low_version_alone(self) -> None:
        without_low = bytes.fromhex("0a0208011a020802")
        self.assertEqual(api_shim.rewrite_capabilities(without_low), without_low)

    def test_rewrite_refuses_a_truncated_message(self) -> None:
        with self.assertRaisesRegex(ValueError, "truncated"):
            api_shim.rewrite_capabilities(CASD_ANSWER[:-2])

    def test_capabilities_through_the_shim_say_2_0(self) -> None:
        answer = self.call("unary_unary", api_shim.CAPABILITIES)(b"", timeout=10)
        self.assertEqual(answer, BAZEL4_ANSWER)

    def test_not_found_stays_not_found_with_its_details_and_metadata_passes(self) -> None:
        with self.assertRaises(grpc.RpcError) as raised:
            self.call("unary_unary", GET_ACTION_RESULT)(
                b"\x01\x02", timeout=10, metadata=[("build.bazel.remote.execution.v2", "x")]
            )
        self.assertEqual(raised.exception.code(), grpc.StatusCode.NOT_FOUND)
        self.assertEqual(raised.exception.details(), "no action result for 0102")
        self.assertIn(("build.bazel.remote.execution.v2", "x"), self.upstream.metadata)

    def test_a_server_stream_passes_its_chunks_then_its_error_code(self) -> None:
        received = []
        with self.assertRaises(grpc.RpcError) as raised:
            for chunk in self.call("unary_stream", READ)(b"abc", timeout=10):
                received.append(chunk)
        self.assertEqual(received, [b"abc", b"cba"])
        self.assertEqual(raised.exception.code(), grpc.StatusCode.DATA_LOSS)

    def test_a_call_without_deadline_is_forwarded_without_one(self) -> None:
        # Bazel calls Execute without a deadline; it must not expire on the way.
        received = []
        with self.assertRaises(grpc.RpcError):
            for chunk in self.call("unary_stream", READ)(b"xy"):
                received.append(chunk)
        self.assertEqual(received, [b"xy", b"yx"])

    def test_with_output_paths_adds_them_sorted_and_keeps_the_rest(self) -> None:
        self.assertEqual(api_shim.with_output_paths(COMMAND_2_0), COMMAND_2_1)
        self.assertIsNone(api_shim.with_output_paths(COMMAND_2_1))  # already 2.1
        self.assertIsNone(api_shim.with_output_paths(b"\x0a\x02sh"))  # no outputs

    def execute(self, command: bytes) -> tuple[bytes, bytes]:
        """Execute an Action of `command` through the shim; (action sent, action executed)."""
        action = ld(1, self.upstream.put(command)) + ld(2, digest(b""))
        request = ld(6, self.upstream.put(action))
        answer = list(self.call("unary_stream", api_shim.EXECUTE)(request, timeout=10))
        self.assertEqual(answer, [b"operation"])
        (executed,) = self.upstream.executed[-1:]
        executed_digest = api_shim._strings(executed, 6)[0]
        name = api_shim._strings(executed_digest, 1)[0].decode()
        return action, self.upstream.blobs[name]

    def test_execute_runs_the_action_of_a_command_with_output_paths(self) -> None:
        action, executed = self.execute(COMMAND_2_0)

        self.assertNotEqual(executed, action)
        command_digest = api_shim._strings(executed, 1)[0]
        self.assertEqual(command_digest, digest(COMMAND_2_1))
        self.assertEqual(api_shim._strings(executed, 2), [digest(b"")])  # input root kept

    def test_execute_passes_a_2_1_action_unchanged(self) -> None:
        action, executed = self.execute(COMMAND_2_1)
        self.assertEqual(executed, action)

    def test_execute_of_an_action_missing_from_the_cas_is_failed_precondition(self) -> None:
        missing = ld(6, digest(b"never uploaded"))
        with self.assertRaises(grpc.RpcError) as raised:
            list(self.call("unary_stream", api_shim.EXECUTE)(missing, timeout=10))
        self.assertEqual(raised.exception.code(), grpc.StatusCode.FAILED_PRECONDITION)
        self.assertIn("the CAS has no blob", raised.exception.details())
        self.assertEqual(self.upstream.executed, [])

    def test_a_client_stream_arrives_whole(self) -> None:
        answer = self.call("stream_unary", WRITE)(iter([b"a", b"bc", b""]), timeout=10)
        self.assertEqual(answer, b"a|bc|")

    def test_an_unknown_method_is_unimplemented_as_upstream_says(self) -> None:
        with self.assertRaises(grpc.RpcError) as raised:
            self.call("unary_unary", "/no.Such/Method")(b"", timeout=10)
        self.assertEqual(raised.exception.code(), grpc.StatusCode.UNIMPLEMENTED)


if __name__ == "__main__":
    unittest.main()
