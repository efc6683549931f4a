"""How a topology's Spark application authenticates, and what refuses it when it would not.

The container package (the topology's code and its CURVE key pair) reaches the executors as a
Spark broadcast, which executors and the driver fetch from each other's block managers, so the
package is as protected as Spark's RPC: with ``spark.authenticate`` on, a client must prove it
holds the application's secret before any request of it is served, and with
``spark.network.crypto.enabled`` the traffic is encrypted. (The package never goes through
``SparkContext.addFile``: Spark's file server hands a file to any client that asks for it by
name, authenticated or not.)

`spark_security` decides, from the config alone, what the application runs with:

- ``local[N]``: authentication and encryption on; Spark makes the secret itself.
- ``spark://`` (standalone): on, with the cluster's shared secret, read from the owner-only file
  ``heron.scheduler.spark.auth.secret.file`` names; the master and the workers must run with
  the same secret (`cluster_fix` says how).
- any other master (``yarn``, ``k8s://``): on; Spark makes or manages the secret, or takes the
  file's when one is named.

A standalone master without a secret file, or a config turning authentication or encryption
off, is refused (`ConfigurationError` naming the fix) unless
``heron.scheduler.spark.allow.unauthenticated`` is true; the scheduler then warns at every
start (`SparkSecurity.unprotected`). The secret is passed to the driver's SparkConf inside
the scheduler service: never on a command line, in a log, in the topology config or in the
state manager.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from heron_core._secret_file import read_secret_file
from heron_core.config import SPARK_CONF_PREFIX, setting
from heron_core.errors import ConfigurationError
from heron_core.scheduler._spark_conf import (
    ALLOW_UNAUTHENTICATED_KEY,
    SECRET_FILE_KEY,
    SparkMaster,
    user_properties,
)

__all__ = [
    "AUTHENTICATE",
    "CRYPTO",
    "SECRET",
    "SparkSecurity",
    "cluster_fix",
    "describe_refusal",
    "master_refusal",
    "spark_security",
]

AUTHENTICATE = "spark.authenticate"
CRYPTO = "spark.network.crypto.enabled"
SECRET = "spark.authenticate.secret"
_MIN_SECRET_CHARS = 16
_MAX_SECRET_BYTES = 4096
_FALSE = ("false", "0", "no", "off")


@dataclass(frozen=True)
class SparkSecurity:
    """What a topology's Spark application authenticates with.

    Attributes:
        properties: the Spark properties it sets (``spark.authenticate``,
            ``spark.network.crypto.enabled``), never the secret.
        secret: the cluster's shared secret for ``spark.authenticate.secret`` (left out of
            ``repr``), None when Spark makes it or authentication is off.
        secret_file: the file the secret came from ("" when none), for messages.
        unprotected: why whoever reaches the application's ports can fetch the container
            package, when ``heron.scheduler.spark.allow.unauthenticated`` lets it run so;
            None when the package is protected.
    """

    properties: dict[str, str]
    secret: str | None = field(default=None, repr=False)
    secret_file: str = ""
    unprotected: str | None = None

    @property
    def authenticates(self) -> bool:
        """Whether the application runs with ``spark.authenticate`` on."""
        return self.properties.get(AUTHENTICATE) == "true"


def cluster_fix() -> str:
    """How to run a standalone cluster whose applications can authenticate (for messages)."""
    return (
        f"start the Spark master and every worker with {AUTHENTICATE}=true, one "
        f"{SECRET} and {CRYPTO}=true (spark-class ... --properties-file FILE, an owner-only "
        f"file), and put the same secret alone in an owner-only file named by {SECRET_FILE_KEY}"
    )


def spark_security(
    config: Mapping[str, Any], master: SparkMaster, topology_name: str
) -> SparkSecurity:
    """What topology ``topology_name``'s application on ``master`` authenticates with (see the
    module's docstring); reads the secret file.

    Raises:
        ConfigurationError: naming the topology and the key: the secret set as a Spark
            property; a secret file with a ``local[N]`` master or with
            ``spark.authenticate=false``; a secret file that cannot be used (see
            `read_secret_file`; not one line of at least 16 printable ASCII characters); or
            an application that would serve the package unauthenticated or in clear
            without ``heron.scheduler.spark.allow.unauthenticated``.

    >>> from heron_core.scheduler._spark_conf import parse_master
    >>> spark_security({}, parse_master("local[2]"), "wc").properties
    {'spark.authenticate': 'true', 'spark.network.crypto.enabled': 'true'}
    >>> allowed = {ALLOW_UNAUTHENTICATED_KEY: True}
    >>> print(spark_security(allowed, parse_master("spark://m:7077"), "wc").unprotected)
    the standalone master spark://m:7077 has no heron.scheduler.spark.auth.secret.file
    """
    where = f"topology {topology_name!r}"
    user = user_properties(config)
    for name in user:
        if name.startswith(SECRET):
            raise ConfigurationError(
                f"{where}: {SPARK_CONF_PREFIX.prefix}{name} is not allowed: the topology's "
                "config is kept in the state manager and shown by the tracker; put the "
                f"secret alone in an owner-only file and name it in {SECRET_FILE_KEY}"
            )
    authenticate = user.get(AUTHENTICATE, "true").strip().lower() not in _FALSE
    crypto = user.get(CRYPTO, "true").strip().lower() not in _FALSE
    secret_file = str(config.get(SECRET_FILE_KEY) or "")
    if secret_file and master.is_local:
        raise ConfigurationError(
            f"{where}: {SECRET_FILE_KEY} is for a cluster's master; with {master.url} Spark "
            "makes the application's secret itself: unset the key or use a spark:// master"
        )
    if secret_file and not authenticate:
        raise ConfigurationError(
            f"{where}: {SECRET_FILE_KEY} names a secret but "
            f"{SPARK_CONF_PREFIX.prefix}{AUTHENTICATE}=false turns authentication off: "
            "unset one of them"
        )
    secret = _read_secret(config, where) if secret_file else None
    why: str | None = None
    fix = ""
    if not authenticate:
        why = f"{SPARK_CONF_PREFIX.prefix}{AUTHENTICATE}=false"
    elif master.kind == "standalone" and secret is None:
        why = f"the standalone master {master.url} has no {SECRET_FILE_KEY}"
        fix = cluster_fix()
        authenticate = False  # Spark needs the cluster's secret to authenticate there
    elif not crypto:
        why = f"{SPARK_CONF_PREFIX.prefix}{CRYPTO}=false sends it in clear"
    if why is not None and not setting(config, ALLOW_UNAUTHENTICATED_KEY):
        raise ConfigurationError(
            f"{where}: Spark would hand the container package, with the topology's key pair, "
            f"to whoever reaches the application's ports: {why}. "
            + (f"To protect it, {fix}; or set " if fix else "Undo that, or set ")
            + f"{ALLOW_UNAUTHENTICATED_KEY}=true to run so anyway, on a network only "
            "trusted hosts reach"
        )
    properties = {AUTHENTICATE: "true" if authenticate else "false"}
    if authenticate:
        properties[CRYPTO] = "true" if crypto else "false"
    return SparkSecurity(properties, secret, secret_file, why)


def _read_secret(config: Mapping[str, Any], where: str) -> str:
    """The secret in the file `SECRET_FILE_KEY` names: one line (a final newline ignored) of
    at least 16 printable ASCII characters, no spaces around it.

    Raises:
        ConfigurationError: naming the topology, the key and the path, never the content.
    """
    found = read_secret_file(
        SECRET_FILE_KEY,
        config.get(SECRET_FILE_KEY),
        holding="the Spark cluster's secret",
        secret="the Spark cluster's secret",
        limit=_MAX_SECRET_BYTES,
    )
    assert found is not None  # the caller checked that the key is set
    path, raw = found

    def bad(why: str) -> ConfigurationError:
        return ConfigurationError(
            f"{where}: {SECRET_FILE_KEY}: {path} must hold the Spark cluster's secret alone, "
            f"one line of at least {_MIN_SECRET_CHARS} printable ASCII characters (make one "
            f"with: openssl rand -hex 32); {why}"
        )

    if len(raw) > _MAX_SECRET_BYTES:
        raise bad(f"found more than {_MAX_SECRET_BYTES} bytes")
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise bad("found bytes that are not ASCII") from None
    text = text.removesuffix("\n").removesuffix("\r")
    if "\n" in text or "\r" in text:
        raise bad("found more than one line")
    if not text.isprintable() or text != text.strip():
        raise bad("found control characters or spaces around it")
    if len(text) < _MIN_SECRET_CHARS:
        raise bad(f"found {len(text)} characters")
    return text


def describe_refusal(
    security: SparkSecurity, master: SparkMaster, topology_name: str, reason: str
) -> str:
    """The error when the standalone ``master`` refused the application's first connection
    (Spark's ``reason``): the secrets differ, or only one side authenticates."""
    where = f"topology {topology_name!r}: the Spark master {master.url} refused the application"
    if security.authenticates:
        return (
            f"{where} (Spark: {reason}): the master runs without authentication or with "
            f"another secret than {SECRET_FILE_KEY} ({security.secret_file}): {cluster_fix()}"
        )
    return (
        f"{where} (Spark: {reason}): the master requires authentication, which the "
        f"application runs without ({security.unprotected}): name the cluster's secret in "
        f"{SECRET_FILE_KEY}"
    )


def master_refusal(jvm: Any, jconf: Any, master: SparkMaster) -> str | None:
    """Spark's reason why a standalone ``master`` refuses a connection made with the driver's
    SparkConf ``jconf`` (a JVM object, the secret in it), or None when some master of the URL
    accepts it: one RPC client (Spark's ``RpcEnv`` in client mode, in the driver's JVM
    ``jvm``) asks each master for its endpoint, which takes a second, where a refused
    application would wait a minute for Spark's own registration to give up.

    Spark's reason is the innermost cause's first line ("Expected SaslMessage, ...": the
    master authenticates and the application does not; "Message is dropped because Outbox is
    stopped": the master runs without authentication or with another secret). A failure of
    the probe itself (Spark's internal API changed) counts as accepted: Spark's registration
    then tells.
    """
    try:
        security = jvm.org.apache.spark.SecurityManager
        manager = security(
            jconf,
            getattr(security, "$lessinit$greater$default$2")(),
            getattr(security, "$lessinit$greater$default$3")(),
        )
        env = jvm.org.apache.spark.rpc.RpcEnv.create(
            "heron-probe", jconf.get("spark.driver.host", "127.0.0.1"), 0, jconf, manager, True
        )
    except Exception:
        return None
    reasons = []
    try:
        for host, port in master.endpoints:
            try:
                env.setupEndpointRef(jvm.org.apache.spark.rpc.RpcAddress(host, port), "Master")
                return None
            except Exception as exc:
                reasons.append(_innermost(exc))
    finally:
        env.shutdown()
    return "; ".join(reasons)


def _innermost(exc: Exception) -> str:
    """The first line of the innermost Java cause of a py4j error (its text otherwise)."""
    cause = getattr(exc, "java_exception", None)
    text = str(exc)
    while cause is not None:
        message = cause.getMessage()
        if message:
            text = str(message)
        cause = cause.getCause()
    return text.strip().splitlines()[0] if text.strip() else type(exc).__name__
