"""The evaluation report's plots (bench.evaluate), read back through matplotlib's own API, and
the report without matplotlib (the optional `bench` extra)."""

import sys

import pytest

from bench.evaluate import (PLOTS_EXTRA, build_report, pass_rate_figure, plots_unavailable, speedup_figure,
                            speedup_histogram, write_report)


def _row(name: str, category: str, speedup: float | None, status: str = "correct") -> dict:
    return {"name": name, "category": category, "status": status, "compiled": status != "compile_error",
            "correct": status == "correct", "speedup": speedup if status == "correct" else None,
            "launches_inferred": False, "reference_kind": "c", "time_s": {}, "iterations": 1}


def _report() -> dict:
    rows = [_row("a", "elementwise", 13.0), _row("b", "elementwise", 13.0), _row("c", "reduction", 0.5),
            _row("d", "reduction", None, "incorrect"), _row("e", "layout", 2.0)]
    return build_report("bench", "compiler", rows)


@pytest.fixture(autouse=True)
def _matplotlib():
    pytest.importorskip("matplotlib")
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


def test_speedups_are_on_a_log_axis_with_1x_marked():
    fig = speedup_figure(_report())
    [ax] = fig.axes
    assert ax.get_yscale() == "log"  # a 13x bar leaves 0.5x visible below 1x
    assert any(list(line.get_ydata()) == [1.0, 1.0] for line in ax.get_lines())  # the 1x line
    fig.canvas.draw()
    assert "1x" in [t.get_text() for t in ax.get_yticklabels()]
    tops = sorted(round(p.get_y() + p.get_height(), 6) for p in ax.patches)
    assert tops == [0.5, 2.0, 13.0]  # bars from 1x to each category's geomean
    assert "vs\nthe C reference" in ax.get_ylabel()


def test_the_histogram_counts_tasks_in_whole_numbers():
    fig = speedup_histogram(_report())
    [ax] = fig.axes
    fig.canvas.draw()
    ticks = [t for t in ax.get_yticks() if ax.get_ylim()[0] <= t <= ax.get_ylim()[1]]
    assert len(ticks) >= 2 and all(float(t).is_integer() for t in ticks), ticks
    assert ax.get_xscale() == "log" and ax.get_xlabel() == "speedup vs the C reference"


def test_the_pass_rate_legend_covers_no_bar():
    fig = pass_rate_figure(_report())
    [ax] = fig.axes
    fig.canvas.draw()
    legend = ax.get_legend().get_window_extent()
    bars = [p.get_window_extent() for p in ax.patches if p.get_height() > 0]
    assert bars and not any(legend.overlaps(bar) for bar in bars)


def test_without_matplotlib_the_report_is_written_and_the_plots_skipped(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the bench extra were not installed
    reason = plots_unavailable()
    assert reason is not None and reason.startswith("plots skipped: matplotlib cannot be imported")
    assert reason.endswith(PLOTS_EXTRA) and "[bench]" in PLOTS_EXTRA
    files = write_report(_report(), tmp_path)
    assert [f.name for f in files] == ["report.json", "report.md"]
    assert not list(tmp_path.glob("*.png"))
