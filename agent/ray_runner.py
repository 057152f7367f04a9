"""Run kernel tasks on a Ray cluster: one Ray task per kernel, the driver keeping checkpoints and trace.

`run_tasks_on_ray` is `agent.runner.run_tasks` with Ray doing the fan-out (`ray.remote`,
`ray.wait`; no scheduler of ours). Each kernel's Ray task (`run_on_worker`) gets the task file
and every file it names as bytes, writes them into a temporary directory on the worker, and
runs the same per-kernel code as a local run there (`run_kernel`, in its own sandbox, with its
own scratch checkpointer and trace). It returns the kernel's final LangGraph checkpoint, its
trace events and the node that ran it. The driver copies that checkpoint into
`OUT/checkpoints.sqlite` under the same thread id a local run uses, writes the result files
from it, and appends the events to `OUT/trace.jsonl`, so that a killed and restarted driver
(or a later local run) finds the finished kernels and redoes only what is missing.

Timings are measured on the worker that ran the kernel, candidate and reference together in
one process; a speedup never divides times taken on two nodes. Which node ran each kernel is
kept in `OUT/nodes.json` (thread id -> node) and goes into the evaluation report.

Ray is optional (`pip install 'cuda2cpu-agent[ray]'`): this module imports it only when called.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import tempfile
import time
from pathlib import Path, PurePosixPath
from typing import Any

from rich.console import Console
from rich.markup import escape

from agent.configuration import Settings
from agent.errors import UserError
from tools.spec import Task, TaskError, load_task

RAY_EXTRA = "pip install 'cuda2cpu-agent[ray]'"
NODES_FILE = "nodes.json"
MAX_RETRIES = 3  # a Ray task whose worker or node died is rerun this often (a kernel's run is idempotent)
CONNECT_TIMEOUT_S = 5.0


def ray_address(settings: Settings, option: str | None = None) -> str | None:
    """The cluster to use: --ray, else the `ray_address` setting (AGENT_RAY_ADDRESS, agent.toml), else RAY_ADDRESS."""
    for value in (option, settings.ray_address, os.environ.get("RAY_ADDRESS")):
        if value and value.strip():
            return value.strip()
    return None


def import_ray():
    try:
        import ray
    except ImportError as exc:
        raise UserError(f"--ray needs Ray, which cannot be imported here ({exc}); install it with: {RAY_EXTRA}") from None
    return ray


def _host_port(address: str) -> tuple[str, int] | None:
    """host and port of 'HOST:PORT' or 'ray://HOST:PORT'; None for 'auto' and other forms Ray resolves itself."""
    rest = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = rest.rpartition(":")
    if not sep or not port.isdigit():
        return None
    return host.strip("[]") or "127.0.0.1", int(port)


def check_reachable(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """Fail within seconds, in one line, where nothing listens at the address (ray.init would retry for minutes)."""
    target = _host_port(address)
    if target is None:
        return
    try:
        socket.create_connection(target, timeout=timeout_s).close()
    except OSError as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
        raise UserError(f"--ray {address}: no Ray cluster reachable there ({reason}); start one with "
                        f"`ray start --head` or check the address") from None


def connect(address: str):
    """ray.init against an existing cluster; a failure is one line."""
    ray = import_ray()
    check_reachable(address)
    if ray.is_initialized():
        return ray
    try:
        with _quiet_stderr():  # Ray's C++ core logs a warning a second while it retries an address that is no Ray
            ray.init(address=address, logging_level="ERROR", log_to_driver=False, configure_logging=True)
    except Exception as exc:  # ConnectionError, RuntimeError, ValueError: Ray's own wording, first line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UserError(f"--ray {address}: cannot connect to the Ray cluster: {first}") from None
    return ray


@contextlib.contextmanager
def _quiet_stderr():
    """File descriptor 2 into a scratch file for the block (native code writes there, not to sys.stderr)."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):
        yield
        return
    try:
        with tempfile.TemporaryFile() as sink:
            os.dup2(sink.fileno(), 2)
            try:
                yield
            finally:
                os.dup2(saved, 2)
    finally:
        os.close(saved)


def cluster_error(exc: Exception) -> RuntimeError:
    """A Ray task's failure (its worker or node died past its retries, or its code raised) in one
    line: the error's type and its last line, where Ray puts the cause."""
    last = (str(exc).strip().splitlines() or [type(exc).__name__])[-1]
    return RuntimeError(f"on the cluster: {type(exc).__name__}: {last}")


@contextlib.contextmanager
def workload_map(address: str, cpus: int = 1):
    """A map for `bench.generator.generate` on the cluster at `address`, for the block: each call one
    Ray task (rerun where its worker dies), results in order, the error in place of a call that
    failed. The connection is closed after the block: a driver still connected when the cluster
    goes away is ended by Ray itself."""
    ray = connect(address)

    def map_on_ray(function, calls: list[tuple]) -> list:
        remote = ray.remote(function).options(num_cpus=cpus, max_retries=MAX_RETRIES, retry_exceptions=False,
                                              name="agent-workload")
        refs = [remote.remote(*call) for call in calls]
        results = []
        for ref in refs:
            try:
                results.append(ray.get(ref))
            except ray.exceptions.RayError as exc:
                results.append(cluster_error(exc))
        return results

    try:
        yield map_on_ray
    finally:
        ray.shutdown()


# --- the worker side -----------------------------------------------------------------------


def task_payload(path: Path) -> dict[str, Any]:
    """The task file and every file it names (relative to it), as bytes: what a worker needs to run it."""
    task = load_task(path)
    files: dict[str, bytes] = {}
    names = [task.cuda, task.reference.path]
    if task.reference.kind == "python" and task.reference.function and ":" in task.reference.function:
        names.append(task.reference.function.split(":", 1)[0].replace(".", "/") + ".py")
    names += [b.data for b in task.buffers if b.data]
    for rel in filter(None, names):
        source = task.path_of(rel)
        if _safe_relative(rel) and source.is_file():
            files[rel] = source.read_bytes()
    return {"name": task.name, "file": path.name, "task_json": path.read_bytes(), "files": files}


def _safe_relative(rel: str) -> bool:
    p = PurePosixPath(rel)
    return not p.is_absolute() and ".." not in p.parts


def node_name() -> str:
    """This machine as the report names it: hostname, with the Ray node id where in a Ray worker."""
    host = socket.gethostname()
    try:
        import ray

        if ray.is_initialized():
            return f"{host} ({ray.get_runtime_context().get_node_id()[:12]})"
    except Exception:
        pass
    return host


def run_on_worker(payload: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """One kernel on this node, as a local run would do it; returns what the driver records."""
    from agent.runner import RunUsage, cached_translators, open_checkpointer, open_kernel_sandbox, run_kernel
    from agent.trace import TraceWriter, read_trace
    from tools.spec import validate_task_deep

    started = time.time()
    with tempfile.TemporaryDirectory(prefix="agent-ray-") as tmp:
        root = Path(tmp)
        task_dir = root / "task"
        for rel, raw in payload["files"].items():
            (task_dir / rel).parent.mkdir(parents=True, exist_ok=True)
            (task_dir / rel).write_bytes(raw)
        task_dir.mkdir(exist_ok=True)
        (task_dir / payload["file"]).write_bytes(payload["task_json"])
        task = load_task(task_dir / payload["file"])
        reply: dict[str, Any] = {"name": task.name, "node": node_name(), "events": []}
        try:
            validate_task_deep(task, memory_mb=settings.limits.memory_mb)
        except TaskError as exc:
            return {**reply, "invalid": str(exc), "seconds": time.time() - started}
        trace = TraceWriter(root / "trace.jsonl", argv=[], config={}, secrets=settings.secrets())
        saver = open_checkpointer(root / "checkpoints.sqlite")
        box = None
        try:
            box = open_kernel_sandbox(settings, task)
            outcome = run_kernel(task, settings, out=root / "out", trace=trace, saver=saver, sandbox=box,
                                 usage=RunUsage(settings), translator_for=cached_translators(settings))
            saved = saver.get_tuple({"configurable": {"thread_id": outcome.thread_id, "checkpoint_ns": ""}})
            reply.update(thread_id=outcome.thread_id, checkpoint=saved.checkpoint, metadata=saved.metadata)
        finally:
            if box is not None:
                box.close()
            trace.close()
            saver.conn.close()
        reply["events"] = read_trace(root / "trace.jsonl").events
        reply["seconds"] = time.time() - started
        return reply


# --- the driver side -----------------------------------------------------------------------


def _load_nodes(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _save_nodes(path: Path, nodes: dict[str, str]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(nodes, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)  # a kill leaves the old file or the new one, never half of one


def finished_outcome(task: Task, thread_id: str, *, graph, out: Path, trace, skipped: bool, node: str):
    """The KernelOutcome of a kernel whose final checkpoint the driver holds; its result files written."""
    from agent.runner import KernelOutcome, thread_config, write_result

    snapshot = graph.get_state(thread_config(thread_id))
    result = write_result(task, snapshot.values, out, trace.path)
    return KernelOutcome(task.name, thread_id, result, out / task.name, skipped=skipped, node=node,
                         plan=snapshot.values.get("plan") or {})


def record_reply(reply: dict[str, Any], task: Task, *, graph, saver, trace, out: Path):
    """What a worker returned (`run_on_worker`), recorded as a local run records it: its trace events
    appended (each naming the Ray node), its final checkpoint under the same thread id (so that a
    restarted driver finds it finished), its result files; returns its KernelOutcome."""
    from agent.runner import record_invalid_task

    for event in reply["events"]:
        trace.event(event["type"], kernel=event.get("kernel"), node=event.get("node"),
                    data={**(event.get("data") or {}), "ray_node": reply["node"]}
                    if isinstance(event.get("data"), dict) else event.get("data"))
    if "invalid" in reply:
        outcome = record_invalid_task(task, TaskError(reply["invalid"]), out=out, trace=trace)
        outcome.node = reply["node"]
        return outcome
    saver.put({"configurable": {"thread_id": reply["thread_id"], "checkpoint_ns": ""}},
              reply["checkpoint"], reply["metadata"], reply["checkpoint"].get("channel_versions", {}))
    return finished_outcome(task, reply["thread_id"], graph=graph, out=out, trace=trace, skipped=False, node=reply["node"])


def kernel_remote(ray, cpus: int):
    """`run_on_worker` as a Ray task asking for `cpus` CPUs, rerun where its worker dies."""
    return ray.remote(run_on_worker).options(num_cpus=cpus, max_retries=MAX_RETRIES, retry_exceptions=False,
                                             name="agent-kernel")


def run_tasks_on_ray(task_paths: list[Path], settings: Settings, *, out: Path, address: str,
                     console: Console | None = None):
    """Every task as a Ray task on the cluster at `address`; one KernelOutcome per task, in order,
    each with `node` set. Finished kernels (in OUT/checkpoints.sqlite) are not sent again."""
    from agent.graph import build_graph
    from agent.runner import (CHECKPOINT_DB, KernelOutcome, finished_earlier, ignore_further_interrupts, open_checkpointer,
                              print_reasons, record_crash, summary_table, thread_config, thread_id_for, trace_config)
    from agent.trace import TraceError, TraceWriter

    console = console or Console(stderr=True)
    ray = connect(address)
    cpus = settings.threads or 1
    largest = max((n.get("Resources", {}).get("CPU", 0) for n in ray.nodes() if n.get("Alive")), default=0)
    if cpus > largest:  # Ray would keep such tasks pending for ever
        ray.shutdown()
        raise UserError(f"--ray {address}: each task asks for {cpus} CPUs (the threads setting), but the largest "
                        f"node of the cluster has {largest:g}")
    tasks = [load_task(p) for p in task_paths]
    out.mkdir(parents=True, exist_ok=True)
    nodes_path = out / NODES_FILE
    nodes = _load_nodes(nodes_path)
    try:
        trace = TraceWriter(out / "trace.jsonl", argv=sys.argv, config=trace_config(settings), secrets=settings.secrets())
    except TraceError as exc:
        raise UserError(f"cannot continue the trace: {exc}") from None
    saver = open_checkpointer(out / CHECKPOINT_DB)
    graph = build_graph(None, checkpointer=saver)
    resources = ray.cluster_resources()
    console.print(f"ray: {address} ({len(ray.nodes())} nodes, {resources.get('CPU', 0):g} CPUs); "
                  f"trace: {trace.path}   checkpoints: {out / CHECKPOINT_DB}", highlight=False, soft_wrap=True)
    trace.event("node_start", node="run", data={"resumed": trace.resumed, "argv": sys.argv, "translator": settings.llm,
                                                "out": str(out), "ray": address, "tasks": [t.name for t in tasks]})
    remote = kernel_remote(ray, cpus)
    settings_ref = ray.put(settings)
    outcomes: dict[str, KernelOutcome] = {}
    pending: dict[Any, tuple[Task, Path, str]] = {}

    try:
        for task, path in zip(tasks, task_paths):
            thread_id = thread_id_for(task, settings.llm)
            snapshot = graph.get_state(thread_config(thread_id))
            if finished_earlier(snapshot):
                trace.event("decision", kernel=task.name, node="run",
                            data={"next": "done", "reason": "finished in an earlier run; not redone", "thread_id": thread_id})
                outcomes[task.name] = finished_outcome(task, thread_id, graph=graph, out=out, trace=trace, skipped=True,
                                                       node=nodes.get(thread_id, "earlier run"))
                continue
            pending[remote.remote(task_payload(path), settings_ref)] = (task, path, thread_id)
        console.print(f"{len(pending)} kernels sent to the cluster, {len(outcomes)} finished earlier", highlight=False)
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                task, path, thread_id = pending.pop(ref)
                try:
                    reply = ray.get(ref)
                except ray.exceptions.RayError as exc:  # the worker or node died past its retries, or the code raised
                    outcome = record_crash(task, cluster_error(exc), out=out, trace=trace, console=console)
                    outcomes[task.name] = outcome
                    continue
                outcome = record_reply(reply, task, graph=graph, saver=saver, trace=trace, out=out)
                if "thread_id" in reply:
                    nodes[reply["thread_id"]] = reply["node"]
                    _save_nodes(nodes_path, nodes)
                outcomes[task.name] = outcome
                console.print(f"{escape(task.name)}: {outcome.result.status} on {escape(reply['node'])} "
                              f"({reply['seconds']:.1f} s)", highlight=False, soft_wrap=True)
    except KeyboardInterrupt:
        ignore_further_interrupts()
        for ref in pending:
            ray.cancel(ref, force=True)
        trace.event("error", node="run", data={"error": "interrupted (KeyboardInterrupt); run the same command to resume"})
        console.print(f"[yellow]interrupted[/]: trace and checkpoints kept in {out}; run the same command to resume",
                      highlight=False, soft_wrap=True)
        raise
    finally:
        trace.event("node_end", node="run", data={"kernels": {n: o.result.status for n, o in outcomes.items()}})
        trace.close()
        saver.conn.close()
        ray.shutdown()
    ordered = [outcomes[t.name] for t in tasks]
    console.print(summary_table(ordered))
    print_reasons(console, ordered)
    return ordered


class HeadError(Exception):
    """A local Ray head did not start; the message says why."""


@contextlib.contextmanager
def local_head(num_cpus: int, temp_dir: str, start_timeout_s: float = 90.0):
    """A throwaway Ray head on 127.0.0.1 with `num_cpus` CPUs (benchmarks and tests); yields its
    address and stops it after. `ray start --block` keeps the head's processes in one process group
    of their own, so stopping it stops exactly this head (`ray stop` would stop every Ray here)."""
    import subprocess

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log_path = Path(temp_dir) / "head.log"
    ray_bin = str(Path(sys.executable).with_name("ray"))
    with open(log_path, "w") as log:
        head = subprocess.Popen([ray_bin, "start", "--head", "--block", "--node-ip-address=127.0.0.1", f"--port={port}",
                                 f"--num-cpus={num_cpus}", "--include-dashboard=false", "--disable-usage-stats",
                                 f"--temp-dir={temp_dir}"], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + start_timeout_s
        while True:
            if head.poll() is not None:
                raise HeadError(f"ray start --head failed (exit {head.returncode}): {log_path.read_text()[-500:]}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise HeadError(f"the Ray head did not listen on port {port} within {start_timeout_s:.0f} s") from None
                time.sleep(0.5)
        yield f"127.0.0.1:{port}"
    finally:
        import signal

        for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 10)):
            try:
                os.killpg(head.pid, sig)
            except ProcessLookupError:
                break
            try:
                head.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue

