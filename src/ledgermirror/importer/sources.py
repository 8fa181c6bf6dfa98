"""Where stream files come from: a local folder or a bucket, in either of the network's layouts.

A source is a :class:`Store` (four primitives over ``/``-separated keys relative to the source root) plus the
node folders found in it by :func:`discover_nodes`:

* ``recordstreams/record<shard>.<realm>.<num>/`` (the reference's ``ACCOUNT_ID`` layout: the folder names the
  node's account, the address book maps it to a node id);
* ``<network>/<shard>/<node id>/record/`` (HIP-679, the ``NODE_ID`` layout).

A local folder may hold the layout inside ``YYYY-MM-DD`` subfolders of its root (the reference's local source
and its day-grouped archive): the node folders are found inside them, a listing after a name looks in the
first two day folders from that name's day on (the reference's "current and next day"), and a file is read from
the day folder its name starts with (else from the root).

Each node folder holds ``<ts>.rcd_sig`` signature files, ``<ts>.rcd[.gz]`` data files and a ``sidecar/``
folder. Listing asks only for names after a cursor (S3 ``StartAfter``, GCS ``startOffset``), so a restart or a
poll never lists history again, and it stops at the first key of a subfolder (``sidecar/`` sorts after every
timestamp), so sidecars are never listed: their names follow from the record file.

Buckets go through ``obstore``: ``s3://bucket/prefix`` (credentials, region and endpoint from the usual
``AWS_*`` environment variables; requester-pays unless ``AWS_REQUESTER_PAYS`` says otherwise; an ``http://``
endpoint is allowed for local servers) and ``gs://bucket/prefix`` (credentials from ``GOOGLE_*`` variables;
``GOOGLE_CLOUD_PROJECT`` is sent as ``x-goog-user-project``, the project billed for requester-pays reads).

Every store counts what it asks of its folder or bucket in a :class:`StoreRequests` (LIST pages, GETs, HEADs
and the bytes read; a bucket's LIST of up to 1,000 keys is one request); ``ledgermirror import --metrics-port``
serves them as ``ledgermirror_importer_store_requests_total{operation}`` and
``ledgermirror_importer_store_read_bytes_total`` (docs/metrics.md).
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import obstore
from obstore.exceptions import NotFoundError
from obstore.store import GCSStore, S3Store

if TYPE_CHECKING:
    from obstore.store import ClientConfig

from ledgermirror.importer.address_book import AccountId, AddressBook
from ledgermirror.importer.folder_listing import FolderListings

SIGNATURE_SUFFIX = ".rcd_sig"
SIDECAR_FOLDER = "sidecar"
_ACCOUNT_FOLDER = re.compile(r"^record(\d+)\.(\d+)\.(\d+)$")
_DAY_FOLDER = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DAY_LENGTH = 10
_DAYS_LISTED = 2
_NUMBER = re.compile(r"^\d+$")
_DISCOVERY_DEPTH = 4
_LIST_PAGE = 1000
"""Keys a bucket's LIST answers at most (S3's and GCS's page): ``obstore.list`` chunks of this size are pages."""
_SKIPPED_FOLDERS = frozenset(
    {SIDECAR_FOLDER, "accountBalances", "eventsStreams", "block", "blocks", "sidecars", "balance"}
)
_ACCOUNT_PARENT = re.compile(r"^(balance|events_?)\d+\.\d+\.\d+$")
"""Node folders of the other streams (``accountBalances/balance0.0.3``): never descended into."""


class SourceError(RuntimeError):
    """The source cannot be used (unknown URL scheme, no node folders, unreadable store)."""


@dataclass(slots=True)
class StoreRequests:
    """What a store asked of its folder or bucket: listings (a bucket's LIST pages; a folder's listing calls,
    each one request however many day folders it scans), reads (GETs, found or not; a folder's reads, one
    request however many paths they try), HEADs, and the bytes read."""

    lists: int = 0
    gets: int = 0
    heads: int = 0
    bytes_read: int = 0

    def by_operation(self) -> dict[str, int]:
        """The counts by the label ``ledgermirror_importer_store_requests_total`` gives them."""
        return {"list": self.lists, "get": self.gets, "head": self.heads}


class Store(Protocol):
    """The few operations the importer needs from a folder or a bucket; keys are relative to its root."""

    description: str
    requests: StoreRequests
    """What the store asked of its folder or bucket so far."""

    async def folders(self, prefix: str) -> list[str]:
        """Names of the immediate subfolders of ``prefix`` (``""`` is the root)."""
        ...

    async def names_after(self, folder: str, after: str | None, suffix: str, limit: int) -> list[str]:
        """Sorted names of the files directly in ``folder`` that end with ``suffix`` and sort after
        ``after`` (a name, or ``None`` for the first), at most ``limit``."""
        ...

    async def read(self, key: str) -> bytes | None:
        """The object's bytes, or ``None`` when it does not exist."""
        ...

    def expect(self, keys: Iterable[str]) -> None:
        """These keys will be read soon: a store whose reads block the import (a local folder) starts fetching
        them now; one whose reads already run in the background (a bucket) does nothing."""
        ...


@dataclass(frozen=True, slots=True)
class NodeFolder:
    path: str
    """Key prefix of the node's folder, without trailing ``/``."""
    account: AccountId | None
    """Set in the ``ACCOUNT_ID`` layout."""
    folder_node_id: int | None
    """Set in the HIP-679 layout."""

    def node_id(self, book: AddressBook) -> int | None:
        """The node id this folder belongs to, given the address book in force."""
        if self.folder_node_id is not None:
            return self.folder_node_id
        if self.account is None:
            return None
        entry = book.node_of_account(self.account)
        return entry.node_id if entry is not None else None

    def key(self, name: str) -> str:
        return f"{self.path}/{name}" if self.path else name

    def sidecar_key(self, name: str) -> str:
        return self.key(f"{SIDECAR_FOLDER}/{name}")


def _join(prefix: str, name: str) -> str:
    return f"{prefix}/{name}" if prefix else name


async def discover_nodes(store: Store) -> list[NodeFolder]:
    """Every node folder within a few levels of the root, in both layouts at once (breadth first, bounded
    depth): some nodes may write the legacy layout while others, or the same node later, write HIP-679's (the
    reference's ``pathType=AUTO``). A node found in both layouts has a folder in each; the signature files of a
    file are looked for in all of them."""
    found: list[NodeFolder] = []
    level: list[tuple[str, tuple[str, ...]]] = [("", ())]
    for _depth in range(_DISCOVERY_DEPTH):
        listed = await asyncio.gather(*(store.folders(prefix) for prefix, _ in level))
        following: list[tuple[str, tuple[str, ...]]] = []
        for (prefix, parents), names in zip(level, listed, strict=True):
            for name in names:
                path = _join(prefix, name)
                account = _ACCOUNT_FOLDER.match(name)
                if account is not None:
                    shard, realm, num = (int(part) for part in account.groups())
                    found.append(NodeFolder(path, AccountId(shard, realm, num), None))
                elif name == "record" and len(parents) >= 2 and all(map(_NUMBER.match, parents[-2:])):
                    found.append(NodeFolder(path, None, int(parents[-1])))
                elif name not in _SKIPPED_FOLDERS and not _ACCOUNT_PARENT.match(name):
                    following.append((path, (*parents, name)))
        if not following:
            break
        level = following
    if not found:
        raise SourceError(f"no node folders (record0.0.N/ or <network>/<shard>/<node>/record/) in {store}")
    return sorted(found, key=lambda folder: folder.path)


# Local folders ------------------------------------------------------------------------------------------------


class LocalStore:
    def __init__(self, root: Path, requests: StoreRequests | None = None) -> None:
        if not root.is_dir():
            raise SourceError(f"no folder at {root}")
        self.root = root
        self.description = str(root)
        self.requests = requests if requests is not None else StoreRequests()
        self._root = str(root)
        self._listings = FolderListings()

    def __str__(self) -> str:
        return self.description

    def _days(self) -> list[str]:
        """The root's ``YYYY-MM-DD`` subfolders, sorted."""
        return sorted(
            entry.name for entry in os.scandir(self.root) if entry.is_dir() and _DAY_FOLDER.match(entry.name)
        )

    async def folders(self, prefix: str) -> list[str]:
        days = self._days()
        bases = [self.root / day for day in days] + [self.root]
        found: set[str] = set()
        self.requests.lists += 1
        for base in bases:
            folder = base / prefix if prefix else base
            if folder.is_dir():
                found.update(entry.name for entry in os.scandir(folder) if entry.is_dir())
        return sorted(found.difference(days) if not prefix else found)

    async def names_after(self, folder: str, after: str | None, suffix: str, limit: int) -> list[str]:
        """The first ``limit`` file names after ``after`` in ``folder`` of the first two day folders from
        ``after``'s day on and of the root (a folder scanned once for several pages while it does not change:
        :mod:`.folder_listing`)."""
        days = self._days()
        if after is not None:
            days = [day for day in days if day >= after[:_DAY_LENGTH]]
        self.requests.lists += 1
        bases = [f"{self._root}/{day}" for day in days[:_DAYS_LISTED]] + [self._root]
        found = [self._listings.names_after(f"{base}/{folder}", after, suffix, limit) for base in bases]
        if len(found) == 1:
            return found[0]
        return sorted(set().union(*found))[:limit]

    def _paths(self, key: str) -> list[str]:
        """Where a key's file may be: in the day folder its name starts with, when there is one, else in the
        root."""
        day = key.rsplit("/", 1)[-1][:_DAY_LENGTH]
        if _DAY_FOLDER.match(day):
            day_folder = f"{self._root}/{day}"
            if os.path.isdir(day_folder):
                return [f"{day_folder}/{key}", f"{self._root}/{key}"]
        return [f"{self._root}/{key}"]

    async def read(self, key: str) -> bytes | None:
        self.requests.gets += 1
        for path in self._paths(key):
            try:
                with open(path, "rb", buffering=0) as file:
                    data = file.read()
            except (FileNotFoundError, NotADirectoryError):
                continue
            self.requests.bytes_read += len(data)
            return data
        return None

    def expect(self, keys: Iterable[str]) -> None:
        """Ask the kernel to read these files into its page cache now (``POSIX_FADV_WILLNEED``: it queues the
        reads and does not wait for them), so that their :meth:`read` later finds them there instead of waiting
        for the disk: a read from a folder blocks the import's thread, and a stream imported from history is
        not in the cache."""
        for key in keys:
            for path in self._paths(key):
                try:
                    descriptor = os.open(path, os.O_RDONLY)
                except OSError:
                    continue
                try:
                    os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_WILLNEED)
                finally:
                    os.close(descriptor)
                break


# Buckets ----------------------------------------------------------------------------------------------------


class BucketStore:
    """A bucket through ``obstore`` (S3 or GCS); keys are relative to the URL's prefix."""

    def __init__(self, url: str, store: Any, requests: StoreRequests | None = None) -> None:
        self.description = url
        self._store = store
        self.requests = requests if requests is not None else StoreRequests()

    def __str__(self) -> str:
        return self.description

    async def folders(self, prefix: str) -> list[str]:
        self.requests.lists += 1
        try:
            result = await obstore.list_with_delimiter_async(self._store, prefix + "/" if prefix else None)
        except Exception as error:  # obstore's errors: network, credentials, missing bucket
            raise SourceError(f"cannot list {self.description}/{prefix}: {error}") from error
        return sorted(path.rstrip("/").rsplit("/", 1)[-1] for path in result["common_prefixes"])

    async def names_after(self, folder: str, after: str | None, suffix: str, limit: int) -> list[str]:
        try:
            return await self._names_after(folder, after, suffix, limit)
        except Exception as error:
            raise SourceError(f"cannot list {self.description}/{folder}: {error}") from error

    async def _names_after(self, folder: str, after: str | None, suffix: str, limit: int) -> list[str]:
        head = folder + "/" if folder else ""
        offset = head + after if after is not None else None
        names: list[str] = []
        stream = obstore.list(self._store, head or None, offset=offset, chunk_size=_LIST_PAGE)
        self.requests.lists += 1  # the first page, asked for even when the folder is empty
        pages = 0
        async for chunk in stream:
            pages += 1
            if pages > 1:
                self.requests.lists += 1
            for meta in chunk:
                name = meta["path"][len(head) :]
                if "/" in name:
                    return names  # a subfolder (sidecar/) sorts after every timestamp: the files are done
                if name.endswith(suffix):
                    names.append(name)
                    if len(names) >= limit:
                        return names
        return names

    async def read(self, key: str) -> bytes | None:
        # counted when asked: a read cancelled in flight (a prefetch past the end of the stream) counts, though
        # the server may not have answered it
        self.requests.gets += 1
        try:
            result = await obstore.get_async(self._store, key)
            data = bytes(await result.bytes_async())
        except (NotFoundError, FileNotFoundError):
            return None
        except Exception as error:
            raise SourceError(f"cannot read {self.description}/{key}: {error}") from error
        self.requests.bytes_read += len(data)
        return data

    def expect(self, keys: Iterable[str]) -> None:
        """Nothing: a bucket's reads run in the background already (the prefetch window)."""


def _s3_store(url: str) -> Any:
    options: dict[str, Any] = {}
    if "AWS_REQUESTER_PAYS" not in os.environ:
        options["request_payer"] = True
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or ""
    if not endpoint:
        endpoint = os.environ.get("AWS_ENDPOINT", "")
    client: ClientConfig = {"allow_http": True} if endpoint.startswith("http://") else {}
    if endpoint:
        options["endpoint"] = endpoint
    if "AWS_REGION" not in os.environ and "AWS_DEFAULT_REGION" not in os.environ:
        options["region"] = "us-east-1"
    return S3Store.from_url(url, client_options=client or None, **options)


def _gcs_store(url: str) -> Any:
    project = os.environ.get("GOOGLE_CLOUD_PROJECT") or os.environ.get("GCLOUD_PROJECT")
    client: ClientConfig | None = {"default_headers": {"x-goog-user-project": project}} if project else None
    return GCSStore.from_url(url, client_options=client)


def open_store(source: str, requests: StoreRequests | None = None) -> Store:
    """A :class:`Store` for a local folder path or an ``s3://`` / ``gs://`` URL, counting its requests in
    ``requests`` (else in its own)."""
    try:
        if source.startswith("s3://"):
            return BucketStore(source, _s3_store(source), requests)
        if source.startswith("gs://"):
            return BucketStore(source, _gcs_store(source), requests)
    except Exception as error:  # obstore's configuration errors (bad URL, credentials)
        raise SourceError(f"cannot open {source}: {error}") from error
    if "://" in source:
        raise SourceError(f"unsupported source {source!r}: expected a folder, s3://bucket/prefix or gs://...")
    return LocalStore(Path(source), requests)


def is_bucket(store: Store) -> bool:
    return isinstance(store, BucketStore)
