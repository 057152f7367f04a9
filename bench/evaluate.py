"""Score a translator on benchmark tasks: compile pass, correct (execute pass), speedup.

`resolve` turns what the user points at (a task file, a directory of task files, an
HPCTransEval JSON file, or a directory of such files like bench/data) into task files, and
the records or files that cannot be tasks into `InvalidRecord`s with the reason: the report
lists them as `invalid_task`, and the rest is evaluated.
`build_report` turns per-task results into the docs/formats.md "Evaluation report"; `write_report`
writes report.json, report.md and, where matplotlib (the optional `bench` extra) is installed,
PNG plots. Running the translator is the caller's job
(agent/commands/evaluate.py drives the agent's graph), so this module needs only `tools`.
"""

from __future__ import annotations

import json
import math
import os
import platform
from dataclasses import dataclass
from pathlib import Path

from tools.result import KernelResult
from tools.spec import Task, TaskError, load_task
from tools.speedups import reference_name

from .convert import InvalidRecord, convert_records
from .format import BenchFormatError

COMPILED = ("correct", "incorrect", "runtime_error", "timeout")


class BenchError(Exception):
    """A benchmark that cannot be evaluated; the message names the file and cause."""


@dataclass
class BenchTask:
    path: Path
    task: Task

    @property
    def category(self) -> str:
        return self.task.category or "uncategorized"


def _is_task_file(path: Path) -> bool:
    try:
        raw = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return False
    return isinstance(raw, dict) and "buffers" in raw and "reference" in raw


def _is_record_file(path: Path) -> bool:
    if path.name in ("manifest.json", "report.json") or path.suffix not in (".json", ".jsonl"):
        return False
    try:
        head = path.read_text()[:4096].lstrip()
    except OSError:
        return False
    return head.startswith("[") or (path.suffix == ".jsonl" and '"cuda_code"' in head)


@dataclass
class Benchmark:
    tasks: list[BenchTask]
    invalid: list[InvalidRecord]


def resolve(bench: Path, workdir: Path, *, limit: int | None = None, per_category: int | None = None) -> Benchmark:
    """Task files for `bench`; records are converted into `workdir/tasks`. `per_category`
    keeps N tasks of each category spread over its records (a stratified sample), `limit` the first N.
    Raises BenchError only where nothing can be evaluated."""
    invalid: list[InvalidRecord] = []
    if bench.is_file():
        paths = [bench] if _is_task_file(bench) else _convert([bench], workdir, invalid)
    elif bench.is_dir():
        files = sorted(p for p in bench.glob("*.json*") if p.is_file())
        tasks = [p for p in files if _is_task_file(p)]
        records = [p for p in files if p not in tasks and _is_record_file(p)]
        paths = tasks + _convert(records, workdir, invalid)
    else:
        raise BenchError(f"{bench}: no such file or directory")
    if not paths and not invalid:
        raise BenchError(f"{bench}: no kernel tasks or HPCTransEval records found")
    out = []
    for p in paths:
        try:
            out.append(BenchTask(p, load_task(p)))
        except TaskError as exc:
            invalid.append(InvalidRecord(p.stem, None, str(exc)))
    if per_category is not None:
        out = _spread_sample(out, per_category)
    return Benchmark(out[:limit] if limit is not None else out, invalid)


def _spread_sample(tasks: list[BenchTask], n: int) -> list[BenchTask]:
    """n tasks of each category, evenly spaced over its list (so over its operators), in order."""
    groups: dict[str, list[int]] = {}
    for i, t in enumerate(tasks):
        groups.setdefault(t.task.category or "", []).append(i)
    keep = {members[(k * len(members)) // min(n, len(members))] for members in groups.values()
            for k in range(min(n, len(members)))}
    return [t for i, t in enumerate(tasks) if i in keep]


def _convert(files: list[Path], workdir: Path, invalid: list[InvalidRecord]) -> list[Path]:
    """Task files of every record that can be one; the others, and files that cannot be read, go
    to `invalid`."""
    paths: list[Path] = []
    for f in files:
        try:
            converted, bad = convert_records(f, workdir / "tasks" / f.stem)
        except BenchFormatError as exc:
            invalid.append(InvalidRecord(f.stem, None, str(exc)))
            continue
        paths += converted
        invalid += [InvalidRecord(b.name, b.category, f"{f.name}: {b.reason}") for b in bad]
    return paths


def invalid_row(record: InvalidRecord) -> dict:
    return {"name": record.name, "category": record.category or "uncategorized", "status": "invalid_task",
            "compiled": False, "correct": False, "speedup": None, "launches_inferred": False, "reference_kind": None,
            "time_s": {}, "iterations": 0, "detail": record.reason}


# ------------------------------------------------------------------ report


def task_row(bt: BenchTask, result: KernelResult, *, node: str | None = None) -> dict:
    """One report row; `node` names the machine that ran (and timed) the task."""
    correct = result.status == "correct"
    speedup = result.speedup_vs_reference if correct else None
    return {
        "name": bt.task.name,
        "category": bt.category,
        "status": result.status,
        "compiled": result.status in COMPILED,
        "correct": correct,
        "speedup": speedup,
        "launches_inferred": not bt.task.launches,
        **({"launches": result.launches} if result.launches else {}),  # how inferred, which answer verified
        "reference_kind": result.reference_kind,
        "time_s": result.time_s.model_dump(),
        "iterations": result.iterations,
        **({"node": node} if node is not None else {}),
        **({"detail": result.reason} if not correct and result.reason else {}),
    }


def summarize(rows: list[dict]) -> dict:
    total = len(rows)
    speedups = [r["speedup"] for r in rows if r["correct"] and r["speedup"]]
    geomean = math.exp(sum(math.log(s) for s in speedups) / len(speedups)) if speedups else None
    return {
        "total": total,
        "compiled": sum(r["compiled"] for r in rows),
        "correct": sum(r["correct"] for r in rows),
        "compile_rate": _share(sum(r["compiled"] for r in rows), total),
        "correct_rate": _share(sum(r["correct"] for r in rows), total),
        "geomean_speedup": geomean,
        # share of ALL tasks that are correct and faster than the reference
        "faster_share": _share(sum(1 for s in speedups if s > 1.0), total),
    }


def _share(n: int, total: int) -> float | None:
    return n / total if total else None


def build_report(benchmark: str, translator: str, rows: list[dict]) -> dict:
    summary = summarize(rows)
    categories = sorted({r["category"] for r in rows})
    summary["by_category"] = {c: summarize([r for r in rows if r["category"] == c]) for c in categories}
    return {
        "benchmark": benchmark,
        "translator": translator,
        "machine": machine(),
        "reference_build": "the task's C reference as tools/verify builds it (CReference)",
        "tasks": rows,
        "summary": summary,
    }


def machine() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "system": platform.platform(), "python": platform.python_version()}


PLOTS_EXTRA = "pip install 'cuda2cpu-agent[bench]'"  # matplotlib is in the optional bench extra


def plots_unavailable() -> str | None:
    """Why this installation cannot draw the plots (one line, with how to get them), or None."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        return f"plots skipped: matplotlib cannot be imported ({exc}); to get them: {PLOTS_EXTRA}"
    return None


def write_report(report: dict, out: Path) -> list[Path]:
    """report.json and report.md, then the plots where matplotlib is installed (plots_unavailable says why not)."""
    out.mkdir(parents=True, exist_ok=True)
    files = [out / "report.json", out / "report.md"]
    files[0].write_text(json.dumps(report, indent=1) + "\n")
    files[1].write_text(markdown(report))
    if plots_unavailable() is None:
        files += plots(report, out)
    return files


def speedup_against(tasks: list[dict]) -> str:
    """What the report's speedups are measured against: each timed task's reference."""
    kinds = {t.get("reference_kind") for t in tasks if t.get("speedup")}
    return reference_name(kinds.pop()) if len(kinds) == 1 else "each task's reference"


def _fmt(v, pct: bool = False) -> str:
    if v is None:
        return "-"
    return f"{100 * v:.1f}%" if pct else f"{v:.3g}"


def markdown(report: dict) -> str:
    s = report["summary"]
    against = speedup_against(report["tasks"])
    lines = [
        f"# Evaluation: {report['benchmark']}",
        "",
        f"Translator: `{report['translator']}`; machine: {report['machine']['cpu']} ({report['machine']['cores']} cores).",
        f"Speedup = reference time / candidate time (reference: {report['reference_build']}), over correct tasks.",
        "",
        f"| category | tasks | compiled | correct | geomean speedup vs {against} | faster than {against} |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, c in [*s["by_category"].items(), ("**all**", s)]:
        lines.append(f"| {name} | {c['total']} | {c['compiled']} ({_fmt(c['compile_rate'], True)}) | "
                     f"{c['correct']} ({_fmt(c['correct_rate'], True)}) | {_fmt(c['geomean_speedup'])} | {_fmt(c['faster_share'], True)} |")
    inferred = sum(1 for t in report["tasks"] if t["launches_inferred"])
    searched = sum(1 for t in report["tasks"] if "alternative" in t.get("launches", "") and t["correct"])
    lines += ["", f"Tasks whose launch configuration was inferred by the planner: {inferred}"
              + (f" ({searched} verified with another answer of the inference than its first)." if searched else "."), "",
              "## Tasks", "", f"| task | category | status | speedup vs {against} | node | detail |", "|---|---|---|---:|---|---|"]
    for t in report["tasks"]:
        detail = t.get("detail", "").replace("|", "/").replace("\n", " ")
        lines.append(f"| {t['name']} | {t['category']} | {t['status']} | {_fmt(t['speedup'])} | {t.get('node') or '-'} | {detail} |")
    return "\n".join(lines) + "\n"


def plots(report: dict, out: Path) -> list[Path]:
    """Pass rates and geomean speedup per category; the speedup distribution (PNG files)."""
    plt = _pyplot()
    figures = {"pass_rates.png": pass_rate_figure(report), "speedup_by_category.png": speedup_figure(report),
               "speedup_hist.png": speedup_histogram(report)}
    files = [_save(fig, out / name) for name, fig in figures.items() if fig is not None]
    plt.close("all")
    return files


def pass_rate_figure(report: dict):
    """Compiled and correct shares per category; None without categories."""
    plt = _pyplot()
    by = report["summary"]["by_category"]
    cats = list(by)
    if not cats:
        return None
    fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(cats)) + 1.5, 3.5), layout="constrained")
    xs = range(len(cats))
    ax.bar([x - 0.2 for x in xs], [100 * (by[c]["compile_rate"] or 0) for c in cats], 0.4, label="compiled")
    ax.bar([x + 0.2 for x in xs], [100 * (by[c]["correct_rate"] or 0) for c in cats], 0.4, label="correct")
    ax.set_xticks(list(xs), cats, rotation=30, ha="right")
    ax.set_ylabel("% of tasks")
    ax.set_ylim(0, 100)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the axes: a 100% bar reaches the top
    ax.set_title(f"{report['translator']}: pass rates")
    return fig


def speedup_figure(report: dict):
    """Geomean speedup per category on a log axis (0.5x is as far below 1x as 2x is above), bars from 1x."""
    plt = _pyplot()
    by = report["summary"]["by_category"]
    cats = list(by)
    if not cats:
        return None
    values = {c: by[c]["geomean_speedup"] for c in cats if by[c]["geomean_speedup"]}
    fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(cats)), 3.5), layout="constrained")
    ax.set_yscale("log")
    xs = range(len(cats))
    ax.bar([x for x, c in zip(xs, cats) if c in values], [v - 1.0 for v in values.values()], 0.6, bottom=1.0)
    for x, c in zip(xs, cats):
        below = values.get(c, 1.0) < 1.0  # the label goes beyond the bar's end, away from the 1x line
        ax.annotate(f"{values[c]:.3g}x" if c in values else "none correct", (x, values.get(c, 1.0)), ha="center",
                    va="top" if below else "bottom", fontsize=8, xytext=(0, -2 if below else 2), textcoords="offset points")
    ax.axhline(1.0, color="gray", linestyle="--", linewidth=1)
    _speedup_ticks(ax, "y", min([1.0, *values.values()]) / 2, max([1.0, *values.values()]) * 2)
    ax.set_xticks(list(xs), cats, rotation=30, ha="right")
    ax.set_ylabel(f"geomean speedup vs\n{speedup_against(report['tasks'])}")
    ax.set_title(f"{report['translator']}: speedup of the correct tasks")
    return fig


def speedup_histogram(report: dict):
    """How many correct tasks reached which speedup, on a log axis with 1x marked; None when none was timed."""
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    speedups = [t["speedup"] for t in report["tasks"] if t["speedup"]]
    if not speedups:
        return None
    low, high = min([1.0, *speedups]) / 1.5, max([1.0, *speedups]) * 1.5
    bins = [low * (high / low) ** (k / 20) for k in range(21)]
    fig, ax = plt.subplots(figsize=(5, 3.5), layout="constrained")
    ax.hist(speedups, bins=bins)
    ax.set_xscale("log")
    _speedup_ticks(ax, "x", low, high)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # task counts
    ax.axvline(1.0, color="gray", linestyle="--", linewidth=1)
    ax.set_xlabel(f"speedup vs {speedup_against(report['tasks'])}")
    ax.set_ylabel("tasks")
    return fig


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    return plt


def _speedup_ticks(ax, which: str, low: float, high: float) -> None:
    """Ticks at 1, 2 and 5 times the powers of ten in [low, high], written as speedups (1x, 2x, 0.5x)."""
    from matplotlib.ticker import NullFormatter

    decades = range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
    ticks = [m * 10.0 ** d for d in decades for m in (1, 2, 5) if low <= m * 10.0 ** d <= high]
    getattr(ax, f"set_{which}lim")(low, high)
    axis = getattr(ax, f"{which}axis")
    axis.set_ticks(ticks, [f"{t:g}x" for t in ticks])
    axis.set_minor_formatter(NullFormatter())


def _save(fig, path: Path) -> Path:
    fig.savefig(path, dpi=100)
    return path
