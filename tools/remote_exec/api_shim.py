"""A REAPI pass-through that lets Bazel 4's REAPI 2.0 client talk to a 2.1+ server.

    python api_shim.py --listen 127.0.0.1:PORT --upstream 127.0.0.1:CASD_PORT

Bazel 4.2.3 speaks REAPI 2.0 only; buildbox-casd speaks 2.1 to 2.12. Two differences matter:

* Capabilities: Bazel refuses a server whose `low_api_version` is above 2.0. The shim answers
  casd's capabilities with that one field set to 2.0.
* Outputs: a 2.0 Command names its outputs in `output_files` / `output_directories`; casd's
  runner reads 2.1's `output_paths` only, so it neither creates the outputs' parent directories
  nor captures them. For each Execute, the shim reads the Action and Command from the CAS, and
  when the Command has no `output_paths` it stores a copy with them (the same paths, sorted) and
  an Action naming that copy, and executes that Action. The ActionResult fills 2.0's fields
  (`output_files`, `output_directories`), which Bazel reads.

Every other call is forwarded byte for byte: requests, responses, streams, metadata, deadlines
and status codes (NOT_FOUND stays NOT_FOUND: Bazel reads it as a cache miss). Messages are
edited on the protobuf wire format, so the shim needs grpcio and nothing generated. It is a
compatibility shim for Bazel 4 only: a Bazel that speaks REAPI 2.1+ talks to casd directly.
"""

from __future__ import annotations

import argparse
import hashlib
import ipaddress
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent import futures

import grpc

CAPABILITIES = "/build.bazel.remote.execution.v2.Capabilities/GetCapabilities"
# ServerCapabilities.low_api_version (a build.bazel.semver.SemVer), and SemVer.major.
_LOW_API_VERSION_FIELD = 4
_SEMVER_MAJOR_FIELD = 1

EXECUTE = "/build.bazel.remote.execution.v2.Execution/Execute"
_CAS = "/build.bazel.remote.execution.v2.ContentAddressableStorage/"
# Field numbers (remote_execution.proto): ExecuteRequest, Action, Command, Digest, and the CAS
# batch calls' messages.
_EXECUTE_INSTANCE, _EXECUTE_ACTION_DIGEST = 1, 6
_ACTION_COMMAND_DIGEST = 1
_COMMAND_OUTPUT_FILES, _COMMAND_OUTPUT_DIRECTORIES, _COMMAND_OUTPUT_PATHS = 3, 4, 7
_DIGEST_HASH, _DIGEST_SIZE = 1, 2
_BATCH_INSTANCE, _BATCH_ITEMS = 1, 2
_READ_RESPONSES, _READ_DIGEST, _READ_DATA, _READ_STATUS = 1, 1, 2, 3
_UPDATE_DIGEST, _UPDATE_DATA = 1, 2

# The REAPI methods whose requests or responses stream; every other method is unary.
_STREAMING = {
    "/build.bazel.remote.execution.v2.Execution/Execute": "unary_stream",
    "/build.bazel.remote.execution.v2.Execution/WaitExecution": "unary_stream",
    "/build.bazel.remote.execution.v2.ContentAddressableStorage/GetTree": "unary_stream",
    "/google.bytestream.ByteStream/Read": "unary_stream",
    "/google.bytestream.ByteStream/Write": "stream_unary",
}


_log = logging.getLogger("api_shim")


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            raise ValueError("truncated varint")
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        pos, shift = pos + 1, shift + 7
        if not byte & 0x80:
            return value, pos


def _fields(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(field number, the field's whole encoding) of each top-level field of a message."""
    pos = 0
    while pos < len(data):
        start = pos
        key, pos = _read_varint(data, pos)
        wire_type = key & 7
        if wire_type == 0:
            _, pos = _read_varint(data, pos)
        elif wire_type == 1:
            pos += 8
        elif wire_type == 2:
            length, pos = _read_varint(data, pos)
            pos += length
        elif wire_type == 5:
            pos += 4
        else:
            raise ValueError(f"unsupported wire type {wire_type}")
        if pos > len(data):
            raise ValueError("truncated field")
        yield key >> 3, data[start:pos]


def rewrite_capabilities(answer: bytes, major: int = 2) -> bytes:
    """`answer` (a serialized ServerCapabilities) with low_api_version set to `major`.0.

    Every other field is kept byte for byte, in its place. An answer without a low version
    gets none (Bazel then reads the deprecated field, as from any server).
    """
    semver = _varint(_SEMVER_MAJOR_FIELD << 3) + _varint(major)
    low = _varint(_LOW_API_VERSION_FIELD << 3 | 2) + _varint(len(semver)) + semver
    return b"".join(
        low if number == _LOW_API_VERSION_FIELD else encoded for number, encoded in _fields(answer)
    )


def _field(number: int, payload: bytes) -> bytes:
    """One length-delimited field (a string, bytes or message)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _payload(encoded: bytes) -> bytes:
    """The payload of one length-delimited field's encoding (as `_fields` yields it)."""
    _, pos = _read_varint(encoded, 0)
    length, pos = _read_varint(encoded, pos)
    return encoded[pos : pos + length]


def _strings(message: bytes, number: int) -> list[bytes]:
    return [_payload(encoded) for n, encoded in _fields(message) if n == number]


def _replace(message: bytes, number: int, payload: bytes) -> bytes:
    """`message` with field `number` (length-delimited, at most once) set to `payload`."""
    kept = [encoded for n, encoded in _fields(message) if n != number]
    return b"".join(kept) + _field(number, payload)


def digest_of(blob: bytes) -> bytes:
    """The REAPI Digest (SHA-256 and size) of `blob`, encoded."""
    return _field(_DIGEST_HASH, hashlib.sha256(blob).hexdigest().encode()) + (
        _varint(_DIGEST_SIZE << 3) + _varint(len(blob))
    )


def with_output_paths(command: bytes) -> bytes | None:
    """A REAPI 2.0 `command` with 2.1's output_paths added, or None when it needs none.

    output_paths are its output_files and output_directories, sorted and without repeats, as
    2.1 requires; every other field is kept.
    """
    if _strings(command, _COMMAND_OUTPUT_PATHS):
        return None
    paths = sorted(
        set(
            _strings(command, _COMMAND_OUTPUT_FILES)
            + _strings(command, _COMMAND_OUTPUT_DIRECTORIES)
        )
    )
    if not paths:
        return None
    return command + b"".join(_field(_COMMAND_OUTPUT_PATHS, path) for path in paths)


def _raw(data: bytes) -> bytes:
    return data


# grpcio reports "no deadline" as about 9.2e18 seconds left, which as a timeout upstream
# overflows into an immediate DEADLINE_EXCEEDED; a call without a deadline stays without one.
_NO_DEADLINE_S = 1e12


def _deadline(context: grpc.ServicerContext) -> float | None:
    remaining = context.time_remaining()
    return None if remaining is None or remaining > _NO_DEADLINE_S else remaining


class PassThrough(grpc.GenericRpcHandler):
    """Forwards every method to `channel`, rewriting GetCapabilities' answer only."""

    def __init__(self, channel: grpc.Channel) -> None:
        self._channel = channel
        self._cas_read = channel.unary_unary(
            _CAS + "BatchReadBlobs", request_serializer=_raw, response_deserializer=_raw
        )
        self._cas_write = channel.unary_unary(
            _CAS + "BatchUpdateBlobs", request_serializer=_raw, response_deserializer=_raw
        )
        # Action digest Bazel sent -> the upgraded Action's digest, so each is made once.
        self._upgraded: dict[bytes, bytes] = {}
        self._lock = threading.Lock()

    def _read(self, instance: bytes, digest: bytes, metadata: object) -> bytes:
        request = _field(_BATCH_INSTANCE, instance) + _field(_BATCH_ITEMS, digest)
        answer = self._cas_read(request, metadata=metadata, timeout=60)
        for response in _strings(answer, _READ_RESPONSES):
            status = _strings(response, _READ_STATUS)
            if status and status[0]:  # a google.rpc.Status with a non-zero code
                name = b"".join(_strings(digest, _DIGEST_HASH)).decode()
                raise LookupError(f"the CAS has no blob {name}")
            data = _strings(response, _READ_DATA)
            return data[0] if data else b""
        raise LookupError("CAS answered no blob")

    def _write(self, instance: bytes, blobs: list[bytes], metadata: object) -> None:
        items = b"".join(
            _field(_BATCH_ITEMS, _field(_UPDATE_DIGEST, digest_of(b)) + _field(_UPDATE_DATA, b))
            for b in blobs
        )
        self._cas_write(_field(_BATCH_INSTANCE, instance) + items, metadata=metadata, timeout=60)

    def upgrade_execute(self, request: bytes, metadata: object) -> bytes:
        """The ExecuteRequest with its Action's Command carrying output_paths (see above)."""
        instance = b"".join(_strings(request, _EXECUTE_INSTANCE))
        digests = _strings(request, _EXECUTE_ACTION_DIGEST)
        if not digests:
            return request
        with self._lock:
            known = self._upgraded.get(digests[0])
        if known is None:
            action = self._read(instance, digests[0], metadata)
            command_digest = _strings(action, _ACTION_COMMAND_DIGEST)
            command = self._read(instance, command_digest[0], metadata) if command_digest else b""
            upgraded = with_output_paths(command)
            if upgraded is None:
                known = digests[0]
            else:
                new_action = _replace(action, _ACTION_COMMAND_DIGEST, digest_of(upgraded))
                self._write(instance, [upgraded, new_action], metadata)
                known = digest_of(new_action)
            with self._lock:
                self._upgraded[digests[0]] = known
        return _replace(request, _EXECUTE_ACTION_DIGEST, known)

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler:
        """The handler for one incoming call, by the method's streaming shape."""
        method = details.method
        kind = _STREAMING.get(method, "unary_unary")
        upstream = getattr(self._channel, kind)(
            method, request_serializer=_raw, response_deserializer=_raw
        )

        def call(request: object, context: grpc.ServicerContext) -> object:
            try:
                return upstream(
                    request,
                    metadata=context.invocation_metadata(),
                    timeout=_deadline(context),
                )
            except grpc.RpcError as err:
                _log.info("%s: %s %s", method, err.code(), err.details())
                context.abort(err.code(), err.details() or "")

        def unary(request: bytes, context: grpc.ServicerContext) -> bytes:
            answer = call(request, context)
            return rewrite_capabilities(answer) if method == CAPABILITIES else answer

        def streamed(request: object, context: grpc.ServicerContext) -> Iterator[bytes]:
            if method == EXECUTE:
                try:
                    request = self.upgrade_execute(request, context.invocation_metadata())
                except (grpc.RpcError, LookupError, ValueError) as err:
                    _log.info("%s: cannot upgrade the action: %s", method, err)
                    context.abort(grpc.StatusCode.FAILED_PRECONDITION, f"api_shim: {err}")
            try:
                yield from call(request, context)
            except grpc.RpcError as err:  # raised while the answer streams
                _log.info("%s: %s %s", method, err.code(), err.details())
                context.abort(err.code(), err.details() or "")

        make: Callable[..., grpc.RpcMethodHandler] = getattr(grpc, f"{kind}_rpc_method_handler")
        behaviour = streamed if kind.endswith("_stream") else unary
        return make(behaviour)


def _start(listen: str, upstream: str, workers: int = 128) -> tuple[grpc.Server, int, grpc.Channel]:
    options = [("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)]
    channel = grpc.insecure_channel(upstream, options=options)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=workers), options=options)
    server.add_generic_rpc_handlers([PassThrough(channel)])
    port = server.add_insecure_port(listen)
    if not port:
        channel.close()
        raise OSError(f"api_shim: cannot listen on {listen}")
    server.start()
    return server, port, channel


def serve(listen: str, upstream: str, workers: int = 128) -> tuple[grpc.Server, int]:
    """Start the shim on `listen` (host:port, port 0 picks one); return it and its port."""
    server, port, _ = _start(listen, upstream, workers)
    return server, port


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or a name, brackets allowed) means this machine only."""
    host = host.strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def listen_address(value: str, allow_non_loopback: bool) -> str:
    """`value` (host:port) checked: a loopback host unless `allow_non_loopback` says otherwise."""
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"--listen {value!r}: expected HOST:PORT, e.g. 127.0.0.1:0")
    if not allow_non_loopback and not is_loopback(host):
        raise ValueError(
            f"--listen {value!r}: {host} is not a loopback address; the shim is unauthenticated "
            "and forwards to an executor that runs any command (--allow-non-loopback to serve "
            "it anyway)"
        )
    return value


def shut_down(server: grpc.Server, channel: grpc.Channel, grace_s: float, hard_s: float) -> None:
    """Stop serving: new calls are refused at once, calls in flight get `grace_s`, then the
    upstream channel is closed, which cancels the upstream calls that the shim's handler
    threads wait on (an Execute stream can wait for hours), so those threads end. Should
    anything still block after `hard_s`, the process exits anyway: a SIGTERM always ends it."""
    watchdog = threading.Timer(hard_s, lambda: os._exit(1))
    watchdog.daemon = True
    watchdog.start()
    stopped = server.stop(grace=grace_s)
    stopped.wait(grace_s + 1)
    channel.close()
    stopped.wait()
    watchdog.cancel()


def main(argv: list[str]) -> int:
    """Serve until SIGTERM or SIGINT, then stop within a few seconds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listen", required=True, help="host:port to serve (127.0.0.1:PORT)")
    parser.add_argument("--upstream", required=True, help="the REAPI server's host:port")
    parser.add_argument(
        "--allow-non-loopback",
        action="store_true",
        help="serve on a --listen address other than loopback (the shim has no authentication)",
    )
    parser.add_argument("--verbose", action="store_true", help="log every failed call")
    args = parser.parse_args(argv)
    try:
        listen = listen_address(args.listen, args.allow_non_loopback)
    except ValueError as err:
        parser.error(str(err))
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    # Handlers first: a SIGTERM that arrives while the server starts still stops it.
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    server, port, channel = _start(listen, args.upstream)
    host = listen.rpartition(":")[0]
    print(f"api_shim: {host}:{port} -> {args.upstream}", flush=True)
    # wait() with a timeout, in a loop: the main thread wakes to run the signal handler.
    while not stop.wait(1):
        pass
    shut_down(server, channel, grace_s=2, hard_s=10)
    print("api_shim: stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
