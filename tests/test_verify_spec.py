"""Bad task files give one clear message naming the file and the field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tools.spec import TaskError, load_task, validate_task_deep

FIX = Path(__file__).parent / "verify_fixtures"


def write_task(tmp_path: Path, fixture: str, edit) -> Path:
    for f in (FIX / fixture).iterdir():
        shutil.copy(f, tmp_path / f.name)
    raw = json.loads((tmp_path / "task.json").read_text())
    edit(raw)
    path = tmp_path / "task.json"
    path.write_text(json.dumps(raw))
    return path


def error_of(path: Path, deep: bool = False) -> str:
    with pytest.raises(TaskError) as info:
        task = load_task(path)
        if deep:
            validate_task_deep(task)
    return str(info.value)


def test_fixtures_are_valid():
    for name in ("vadd", "scale_count", "prefix"):
        validate_task_deep(load_task(FIX / name / "task.json"))


def test_unknown_dtype_names_field(tmp_path):
    path = write_task(tmp_path, "vadd", lambda r: r["buffers"][1].update(dtype="float128"))
    msg = error_of(path)
    assert str(path) in msg and "field 'buffers[1].dtype'" in msg and "unknown dtype 'float128'" in msg


def test_missing_cuda_file(tmp_path):
    path = write_task(tmp_path, "vadd", lambda r: r.update(cuda="nope.cu"))
    assert error_of(path) == f"{path}: field 'cuda': file not found: nope.cu"


def test_missing_reference_file(tmp_path):
    path = write_task(tmp_path, "vadd", lambda r: r["reference"].update(path="gone.c"))
    assert error_of(path) == f"{path}: field 'reference.path': file not found: gone.c"


def test_c_reference_function_not_found(tmp_path):
    path = write_task(tmp_path, "vadd", lambda r: r["reference"].update(function="vadd_reff"))
    assert error_of(path) == f"{path}: field 'reference.function': function 'vadd_reff' not found in ref.c"


def test_python_reference_function_not_found(tmp_path):
    path = write_task(tmp_path, "scale_count", lambda r: r["reference"].update(function="ref:missing"))
    assert error_of(path) == f"{path}: field 'reference.function': function 'missing' not found in ref.py"
    path = write_task(tmp_path, "scale_count", lambda r: r["reference"].update(function="nomodule:scale_count"))
    assert "field 'reference.function': module 'nomodule' not found" in error_of(path)


def test_reference_args_unknown_name(tmp_path):
    path = write_task(tmp_path, "vadd", lambda r: r["reference"].update(args=["n", "a", "b", "d"]))
    assert "field 'reference.args[3]': unknown buffer or scalar 'd'" in error_of(path)


def test_unknown_field_and_bad_json(tmp_path):
    path = write_task(tmp_path, "vadd", lambda r: r.update(tolerence={"rtol": 1}))
    assert "field 'tolerence': unknown field 'tolerence'" in error_of(path)
    path.write_text('{"name": "x",')
    assert "not valid JSON (line 1" in error_of(path)


def test_launch_argument_count_mismatch(tmp_path):
    path = write_task(tmp_path, "vadd", lambda r: r["launches"][0].update(args=["a", "b", "c"]))
    msg = error_of(path, deep=True)
    assert msg.startswith(f"{path}: field 'launches[0].args': 3 arguments for vadd_kernel, which has 4 parameters")


def test_launch_buffer_to_value_parameter(tmp_path):
    path = write_task(tmp_path, "vadd", lambda r: r["launches"][0].update(args=["a", "b", "n", "c"]))
    msg = error_of(path, deep=True)
    assert "field 'launches[0].args[2]': 'n' is not a buffer, but parameter 'float* c' is a pointer" in msg


def test_launch_dtype_mismatch_and_unknown_kernel(tmp_path):
    def retype(r):
        r["buffers"][0]["dtype"] = "int32"
    msg = error_of(write_task(tmp_path, "vadd", retype), deep=True)
    assert "field 'launches[0].args[0]': buffer 'a' is int32, but parameter" in msg and "points to float" in msg
    msg = error_of(write_task(tmp_path, "vadd", lambda r: r["launches"][0].update(kernel="vadd2")), deep=True)
    assert "field 'launches[0].kernel': no __global__ function 'vadd2' in kernel.cu (kernels: vadd_kernel)" in msg


def test_shape_extents_must_be_positive(tmp_path):
    path = write_task(tmp_path, "vadd", lambda r: r["buffers"][0].update(shape=[100, -37]))
    assert error_of(path) == f"{path}: field 'buffers[0].shape': shape [100, -37]: every extent must be at least 1"


def test_buffers_must_fit_in_the_sandbox_memory(tmp_path):
    path = write_task(tmp_path, "vadd", lambda r: r["buffers"][2].update(shape=[10**6, 10**6]))
    task = load_task(path)
    assert task.buffer("c").size == 10**12  # exact, where a numpy product of int64 could wrap
    with pytest.raises(TaskError) as info:
        validate_task_deep(task, memory_mb=4096)
    assert str(info.value) == (f"{path}: field 'buffers': the buffers take 3.64 TB (buffer 'c': shape [1000000, 1000000], "
                               "1,000,000,000,000 elements), more than the sandbox's memory limit of 4096 MB (limits.memory_mb)")
    validate_task_deep(load_task(FIX / "vadd" / "task.json"), memory_mb=4096)


def test_without_launches_a_buffer_is_checked_against_the_parameter_of_its_name(tmp_path):
    def retype(r):
        del r["launches"]
        r["buffers"][2]["dtype"] = "float64"
    msg = error_of(write_task(tmp_path, "vadd", retype), deep=True)
    assert msg.endswith("field 'buffers[2].dtype': buffer 'c' is float64, but kernel 'vadd_kernel' takes 'float* c'")


def test_a_cuda_syntax_error_names_the_file_line_and_column(tmp_path):
    path = write_task(tmp_path, "vadd", lambda r: None)
    (tmp_path / "kernel.cu").write_text((FIX / "vadd" / "kernel.cu").read_text().replace("threadIdx.x;", "threadIdx.x"))
    msg = error_of(path, deep=True)
    assert msg == f"{path}: field 'cuda': {tmp_path / 'kernel.cu'}:2:48: expected ';' at end of declaration"


def test_a_cuda_file_that_is_not_text_is_said_so(tmp_path):
    path = write_task(tmp_path, "vadd", lambda r: None)
    (tmp_path / "kernel.cu").write_bytes(b"\x7fELF\x02\x01\x01\xff\xfe\x00\x00")
    assert error_of(path, deep=True) == f"{path}: field 'cuda': kernel.cu is not UTF-8 text (byte 7: invalid start byte)"


def test_a_pointer_into_a_buffer_is_a_pointer_argument(tmp_path):
    """`a + 1` passed to a pointer parameter points into buffer a (tests/optimize_fixtures use it)."""
    path = write_task(tmp_path, "vadd", lambda r: r["launches"][0].update(args=["a", "b", "c + 1", "n"]))
    validate_task_deep(load_task(path))
