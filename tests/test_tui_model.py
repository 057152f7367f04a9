"""The fold from trace events to what the TUI shows: stages, statuses, speedups, the summary."""

import math

from agent.tui.model import fold


def ev(seq, kernel, node, type, **data):
    return {"seq": seq, "t": 0.0, "kernel": kernel, "node": node, "type": type, "data": data}


def finished(kernel, seq, *, status, speedup=None):
    """A kernel whose one attempt ended `status` (timed at `speedup` when correct)."""
    events = [
        ev(seq, kernel, "kernel", "node_start", translator="compiler"),
        ev(seq + 1, kernel, "translate", "node_start", attempt=1),
        ev(seq + 2, kernel, "translate", "artifact", role="candidate", attempt=1, mode="translate", code=f"// {kernel}"),
        ev(seq + 3, kernel, "test", "tool_result", tool="check", attempt=1, result={"status": status}),
    ]
    if speedup:
        events.append(ev(seq + 4, kernel, "profile", "tool_result", tool="profile", attempt=1,
                         result={"status": "correct", "speedup_vs_reference": speedup, "time_s": {"candidate": 1.0 / speedup}}))
    events.append(ev(seq + 5, kernel, "kernel", "node_end", status=status, paused=False))
    return events


def test_summary_counts_finished_and_correct_kernels_and_takes_the_geomean_over_correct_ones():
    view = fold(finished("a", 1, status="correct", speedup=2.0) + finished("b", 10, status="correct", speedup=8.0)
                + finished("c", 20, status="incorrect") + [ev(30, "d", "plan", "node_start", attempt=0)])
    summary = view.summary()
    assert (summary["kernels"], summary["done"], summary["correct"]) == (4, 3, 2)
    assert math.isclose(summary["geomean_speedup"], 4.0)
    assert [view.kernels[k].stage for k in "abcd"] == ["done", "done", "failed", "plan"]
    assert view.kernels["c"].status == "incorrect" and view.kernels["c"].speedup is None


def test_user_steering_reopens_and_accepts():
    events = finished("a", 1, status="correct", speedup=2.0)
    events += [ev(10, "a", "user", "observation", kind="human", message="try blocking", attempt=0, severity="info"),
               ev(11, "a", "user", "decision", next="optimize", reason="another attempt: a hint from the user")]
    view = fold(events)
    kernel = view.kernels["a"]
    assert (kernel.stage, kernel.result_status, kernel.finished) == ("paused", None, False)
    assert kernel.observations[-1]["kind"] == "human"
    view.apply(ev(12, "a", "translate", "node_start", attempt=2))
    view.apply(ev(13, "a", "translate", "artifact", role="candidate", attempt=2, mode="optimize", code="// faster"))
    view.apply(ev(14, "a", "profile", "tool_result", tool="profile", attempt=2,
                  result={"status": "correct", "speedup_vs_reference": 5.0, "time_s": {"candidate": 0.2}}))
    assert kernel.speedup == 5.0 and list(kernel.versions()) == ["attempt 1", "attempt 2"]
    view.apply(ev(15, "a", "user", "decision", next="done", reason="attempt 1 accepted by the user", accepted=1))
    view.apply(ev(16, "a", "kernel", "node_end", status="correct", paused=False))
    assert (kernel.stage, kernel.speedup, kernel.accepted) == ("done", 2.0, 1)
    assert view.log[-1] == "a: finished correct"
