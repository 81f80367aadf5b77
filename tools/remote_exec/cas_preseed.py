"""Put local directories' files into buildbox-casd's CAS before Bazel uploads them.

    python cas_preseed.py --casd 127.0.0.1:PORT DIR...

Bazel asks the CAS which of an action's inputs it lacks (FindMissingBlobs) and uploads those,
one ByteStream call a blob. Through the API shim on one connection (check.sh,
--remote_max_connections=1) the venv's 26,000 files took minutes of the remote check, with
Bazel's actions waiting for their inputs ("0 running"). casd's own LocalCAS CaptureTree reads
a directory from this machine's file system into its store in one call; what Bazel then finds
present it does not send. The actions still run on the executor from the CAS: only the way the
blobs got there changes (as with a CAS that kept the venv from an earlier run).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import api_shim

# LocalContentAddressableStorage.CaptureTree (build/buildgrid/local_cas.proto) on the protobuf
# wire format, as api_shim.py edits REAPI messages: the executor's venv has grpcio, no protobuf.
CAPTURE_TREE = "/build.buildgrid.LocalContentAddressableStorage/CaptureTree"
_REQUEST_PATH, _REQUEST_SKIP_UPLOAD = 2, 8
_RESPONSE_RESPONSES, _RESPONSE_PATH, _RESPONSE_STATUS = 1, 1, 3
_STATUS_CODE, _STATUS_MESSAGE = 1, 2


def capture_request(paths: list[str]) -> bytes:
    """A serialized CaptureTreeRequest for `paths`, blobs kept in casd's local store."""
    request = b"".join(api_shim._field(_REQUEST_PATH, p.encode()) for p in paths)
    return request + api_shim._varint(_REQUEST_SKIP_UPLOAD << 3) + api_shim._varint(1)


def capture_failures(response: bytes) -> list[str]:
    """`path: message` of each path a serialized CaptureTreeResponse says failed."""
    failed = []
    for item in api_shim._strings(response, _RESPONSE_RESPONSES):
        path = b"".join(api_shim._strings(item, _RESPONSE_PATH)).decode()
        for status in api_shim._strings(item, _RESPONSE_STATUS):
            code = 0
            for number, encoded in api_shim._fields(status):
                if number == _STATUS_CODE:
                    code = api_shim._read_varint(encoded, 1)[0]
            if code:
                message = b"".join(api_shim._strings(status, _STATUS_MESSAGE)).decode()
                failed.append(f"{path}: code {code}: {message}")
    return failed


def capture(casd: str, directories: list[str]) -> None:
    """CaptureTree the directories into casd's store; exits naming any it refused."""
    import grpc

    paths = [os.path.realpath(d) for d in directories]
    with grpc.insecure_channel(casd) as channel:
        call = channel.unary_unary(
            CAPTURE_TREE, request_serializer=None, response_deserializer=None
        )
        response = call(capture_request(paths), timeout=1800)
    answered = len(api_shim._strings(response, _RESPONSE_RESPONSES))
    if answered != len(paths):
        raise SystemExit(f"cas_preseed: casd answered {answered} of {len(paths)} paths")
    if failed := capture_failures(response):
        raise SystemExit("cas_preseed: casd could not capture " + "; ".join(failed))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cas_preseed.py")
    parser.add_argument("--casd", required=True, help="buildbox-casd's HOST:PORT")
    parser.add_argument("directories", nargs="+")
    args = parser.parse_args(argv)
    missing = [d for d in args.directories if not os.path.isdir(d)]
    if missing:
        raise SystemExit(f"cas_preseed: not a directory: {', '.join(missing)}")
    start = time.monotonic()
    capture(args.casd, args.directories)
    took = time.monotonic() - start
    print(f"cas_preseed: {len(args.directories)} directories in casd's CAS in {took:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
