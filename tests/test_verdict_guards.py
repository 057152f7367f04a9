"""Finding the preprocessor guard that leaves a program's verdict out of its build."""

import pytest

from tools.project.discover import discover
from tools.project.verdict_guards import failure_messages, verdict_guards

MAIN = """#include <cstdio>
int main() {
  int errors = 0;
{guarded}
}
"""


@pytest.mark.parametrize("guarded, makefile, expected", [
    ('#ifdef DEBUG\n  printf("%s\\n", errors ? "FAIL" : "PASS");\n#endif',
     "ifeq ($(DEBUG),yes)\n  CFLAGS += -DDEBUG\nendif\n", ("DEBUG", 5, "DEBUG=yes")),
    ('#if defined(CHECK)\n  if (errors) printf("Mismatch\\n");\n#endif',
     "ifdef CHECK\nNVCC_FLAGS += -D CHECK\nendif\n", ("CHECK", 5, "CHECK=1")),
    ('#ifndef SKIP_VERIFY\n  printf("%d\\n", errors);\n#else\n  printf("Test passed\\n");\n#endif',
     "", ("SKIP_VERIFY", 7, None)),
    ('#ifdef DEBUG\n  printf("%d\\n", errors);\n#endif\n  printf("done\\n");', "", None),  # no verdict left out
    ('#if 0\n  printf("PASS\\n");\n#endif', "", None),  # no macro to define
    ('#ifdef VERIFY\n  printf("PASS\\n");\n#endif', "", None),  # defined by the build (below)
])
def test_the_guard_of_a_verdict_the_build_leaves_out(tmp_path, guarded, makefile, expected):
    defines = "-DVERIFY" if "VERIFY" in guarded else ""
    (tmp_path / "main.cu").write_text(MAIN.replace("{guarded}", guarded))
    (tmp_path / "Makefile").write_text(f"CFLAGS = -O2 {defines}\n{makefile}main: main.cu\n\tnvcc $(CFLAGS) -o main main.cu\n")
    guards = verdict_guards(discover(tmp_path))
    assert [(g.macro, g.line, g.make_setting) for g in guards] == ([expected] if expected else []), guards


def test_failure_messages_are_those_that_say_only_that_the_check_failed(tmp_path):
    (tmp_path / "main.cu").write_text(
        'int main() {\n  printf("cudaMalloc failed: %s\\n", "x");\n  printf("Mismatch at %d: %f vs %f\\n", 1, 2.0, 3.0);\n'
        '#ifdef VERIFY\n  printf("Verification FAILED\\n");\n#endif\n  printf("3D result: FAIL\\n");\n'
        '  printf("Error opening file\\n");\n}\n')
    (tmp_path / "Makefile").write_text("main: main.cu\n\tnvcc -o main main.cu\n")
    assert [(m.line, str(m)) for m in failure_messages(discover(tmp_path))] == [
        (3, "main.cu:3 `Mismatch at %d: %f vs %f`"), (7, "main.cu:7 `3D result: FAIL`")]


def test_a_failure_to_pass_a_named_check_is_a_failure_message(tmp_path):
    # the words between "failed to pass" and "check"/"test" name what was checked
    (tmp_path / "main.cu").write_text(
        'int main() {\n  printf("Failed to pass channel shuffle (NHWC) check\\n");\n'
        '  printf("failed to pass the arguments to the solver\\n");\n  printf("Failed to pass test %d\\n", 3);\n}\n')
    (tmp_path / "Makefile").write_text("main: main.cu\n\tnvcc -o main main.cu\n")
    assert [m.line for m in failure_messages(discover(tmp_path))] == [2, 4]
