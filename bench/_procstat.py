"""CPU seconds and memory of the API processes and of PostgreSQL, read from /proc (through psutil)."""

from __future__ import annotations

from dataclasses import dataclass

import psutil


@dataclass(frozen=True, slots=True)
class Usage:
    cpu_seconds: float
    rss_bytes: tuple[int, ...]


def _tree(pid: int) -> list[psutil.Process]:
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def usage(pids: list[int]) -> Usage:
    cpu = 0.0
    rss: list[int] = []
    for pid in pids:
        for process in _tree(pid):
            try:
                times = process.cpu_times()
                # children_* hold the CPU of exited children this process reaped (e.g. closed backends)
                cpu += times.user + times.system + times.children_user + times.children_system
                rss.append(process.memory_info().rss)
            except psutil.NoSuchProcess:
                continue
    return Usage(cpu, tuple(rss))


def postmaster_pids(data_dir: str | None = None) -> list[int]:
    """The PostgreSQL postmasters on this machine (their backends are their children); with ``data_dir``, only
    the one whose command line names that folder."""
    processes = [
        p
        for p in psutil.process_iter(["name", "ppid", "cmdline"])
        if (p.info["name"] or "").startswith("postgres")
    ]
    pids = {process.pid for process in processes}
    return [
        process.pid
        for process in processes
        if process.info["ppid"] not in pids
        and (data_dir is None or any(data_dir in part for part in process.info["cmdline"] or ()))
    ]


def connections_by_process(pids: list[int], port: int) -> list[int]:
    """How many established connections on ``port`` each process of the trees of ``pids`` holds (the workers that
    hold any), most first: how a server's connections are split between its workers."""
    counts: list[int] = []
    processes = {process.pid: process for pid in pids for process in _tree(pid)}
    for process in processes.values():
        try:
            held = sum(
                1
                for connection in process.net_connections(kind="tcp")
                if connection.status == psutil.CONN_ESTABLISHED
                and connection.laddr
                and connection.laddr.port == port
            )
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if held:
            counts.append(held)
    return sorted(counts, reverse=True)


def listening_pids(port: int) -> list[int]:
    """The process serving a TCP port: for uvicorn with workers (spawned by ``multiprocessing``), the parent
    that spawned them, whose process tree then counts every worker."""
    roots: set[int] = set()
    for connection in psutil.net_connections(kind="tcp"):
        if connection.status != psutil.CONN_LISTEN or not connection.laddr or connection.laddr.port != port:
            continue
        if connection.pid is None:
            continue
        try:
            process = psutil.Process(int(connection.pid))
            if "multiprocessing" in " ".join(process.cmdline()):
                process = process.parent() or process
        except psutil.NoSuchProcess:
            continue
        roots.add(process.pid)
    return sorted(roots)
