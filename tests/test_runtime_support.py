"""Shared helper for the CPU CUDA runtime tests: build a C++ program against the runtime
headers with the real g++ and run it.  (No tests here.)"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tools.cuda.runtime import INCLUDE_DIR

WARNING_FLAGS = ("-Wall", "-Wextra", "-Werror")

# C++ for test programs that exchange arrays with Python through raw binary files (numpy's tofile/fromfile).
BINARY_IO = r"""
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

template <class T>
static std::vector<T> load(const std::string& path) {
    FILE* file = std::fopen(path.c_str(), "rb");
    if (!file) std::abort();
    std::fseek(file, 0, SEEK_END);
    long bytes = std::ftell(file);
    std::fseek(file, 0, SEEK_SET);
    std::vector<T> data(static_cast<size_t>(bytes) / sizeof(T));
    if (std::fread(data.data(), sizeof(T), data.size(), file) != data.size()) std::abort();
    std::fclose(file);
    return data;
}

template <class T>
static void save(const std::string& path, const std::vector<T>& data) {
    FILE* file = std::fopen(path.c_str(), "wb");
    if (!file) std::abort();
    std::fwrite(data.data(), sizeof(T), data.size(), file);
    std::fclose(file);
}
"""


def build(sources: dict[str, str], workdir: Path, name: str = "prog", extra_flags: tuple[str, ...] = ()) -> Path:
    """Write the C++ sources into workdir, compile and link them; return the executable."""
    paths = []
    for filename, text in sources.items():
        path = workdir / filename
        path.write_text(text)
        paths.append(str(path))
    exe = workdir / name
    command = ["g++", "-O2", "-fopenmp", "-std=c++17", *WARNING_FLAGS, "-I", str(INCLUDE_DIR), *extra_flags, *paths, "-o", str(exe)]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, f"compile failed:\n{result.stderr}"
    return exe


def run(exe: Path, *args: str, threads: int = 2) -> str:
    """Run a built program with OMP_NUM_THREADS=threads; return its stdout (exit status 0 asserted)."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    result = subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, cwd=exe.parent)
    assert result.returncode == 0, f"{exe.name} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def build_and_run(source: str, workdir: Path, *args: str, threads: int = 2) -> str:
    return run(build({"prog.cpp": source}, workdir), *args, threads=threads)


def parse_lines(output: str) -> dict[str, list[str]]:
    """Parse 'key value value ...' lines into a dict of key -> values."""
    table = {}
    for line in output.splitlines():
        if line.strip():
            key, *values = line.split()
            table[key] = values
    return table
