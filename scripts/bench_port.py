#!/usr/bin/env python3
"""Port every example project and print, per example: port time, kernel count, whether the
port passed its own check, and the speedup of the tuned kernels over the faithful lowering
(measured in the same per-kernel run on data captured from the project's own execution).

    .venv/bin/python scripts/bench_port.py [-o OUT] [--sandbox local] [NAME ...]
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="example projects (default: all under examples/projects)")
    parser.add_argument("-o", "--out", type=Path, default=Path("bench-port-out"))
    parser.add_argument("--sandbox", default="local")
    args = parser.parse_args()
    names = args.names or sorted(p.name for p in (ROOT / "examples" / "projects").iterdir() if p.is_dir())
    rows = []
    for name in names:
        out = (args.out / name).resolve()
        start = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "agent", "port", str(ROOT / "examples" / "projects" / name),
                               "-o", str(out), "--sandbox", args.sandbox], capture_output=True, text=True, cwd=ROOT)
        seconds = time.monotonic() - start
        try:
            report = json.loads((out / "port_report.json").read_text())
        except (OSError, json.JSONDecodeError):
            rows.append((name, seconds, 0, False, [], f"no report (exit {proc.returncode})"))
            continue
        speedups = [k["speedup"] for k in report["kernels"] if k.get("speedup")]
        tuned = [k["name"] for k in report["kernels"] if (k.get("tuning") or "").startswith("tuned")]
        rows.append((name, seconds, len(report["kernels"]), report["check"]["passed"], speedups,
                     f"tuned: {', '.join(tuned) or '-'}"))
    print(f"{'example':<18} {'port s':>8} {'kernels':>8} {'check':>6} {'geomean speedup':>16}  notes")
    for name, seconds, count, passed, speedups, note in rows:
        geo = math.exp(sum(map(math.log, speedups)) / len(speedups)) if speedups else float("nan")
        print(f"{name:<18} {seconds:8.1f} {count:8d} {'PASS' if passed else 'FAIL':>6} {geo:16.2f}  {note}")
    return 0 if all(r[3] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
