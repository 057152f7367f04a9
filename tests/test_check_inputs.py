"""The paths a check command names outside the port tree (input data beside the project) are carried
into the sandbox where the unchanged command finds them, within a size cap; what is not is said."""

from pathlib import Path

from sandboxes import LocalSandbox
from tools.project.inputs import check_inputs, missing_inputs, named_paths


def project(tmp_path: Path) -> Path:
    """tmp_path/app with its own input and a build/ folder the port's copy skips; tmp_path/data beside it."""
    root = tmp_path / "app"
    (root / "sub").mkdir(parents=True)
    (root / "build").mkdir()
    (root / "local.txt").write_text("in the project\n")
    (root / "build" / "made.txt").write_text("in build/\n")
    (tmp_path / "data" / "bfs").mkdir(parents=True)
    (tmp_path / "data" / "bfs" / "graph.txt").write_text("0 1\n1 2\n")
    return root


def test_named_paths_follow_cd_and_redirections(tmp_path):
    root = tmp_path / "app"
    named = named_paths("cd sub && X=1 ./main --graph=../../data/g.txt 0.5 < in.txt > out.txt 2>&1", root)
    assert [(n.word, n.host, n.sandbox, n.program) for n in named] == [
        ("./main", root / "sub" / "main", "src/sub/main", True),
        ("../../data/g.txt", tmp_path / "data" / "g.txt", "data/g.txt", False),
        ("0.5", root / "sub" / "0.5", "src/sub/0.5", False),
        ("in.txt", root / "sub" / "in.txt", "src/sub/in.txt", False),  # read; out.txt, written, is not named
    ]


def test_what_lies_beside_the_project_or_in_a_skipped_folder_is_carried(tmp_path):
    root = project(tmp_path)
    inputs = check_inputs(["./main ../data/bfs/graph.txt local.txt build/made.txt", "./build/main ../data"], root)
    # the folder takes in the file named in it; local.txt comes with the port tree; ./build/main is the build's
    assert [(n.word, n.sandbox) for n in inputs.carried] == [("../data", "data"), ("build/made.txt", "src/build/made.txt")]
    assert inputs.left_out == [] and inputs.fingerprint
    with LocalSandbox(use_bwrap=False) as box:
        box.put_path(root / "local.txt", "src/local.txt")  # the port tree (which leaves build/ out)
        inputs.put(box)
        result = box.run("cat ../data/bfs/graph.txt build/made.txt local.txt", cwd="src")
    assert result.ok and result.stdout == "0 1\n1 2\nin build/\nin the project\n"
    (tmp_path / "data" / "bfs" / "graph.txt").write_text("0 1\n")
    assert check_inputs(["./main ../data"], root).fingerprint != inputs.fingerprint  # other data, another check


def test_what_is_not_carried_is_said_and_why(tmp_path):
    root = project(tmp_path)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "x.txt").write_text("x")
    inputs = check_inputs(["./main ../data/bfs/graph.txt ../.. ../src/x.txt"], root, limit=4)
    assert inputs.carried == [] and inputs.fingerprint == ()
    assert inputs.left_out == [
        "`./main ../data/bfs/graph.txt ../.. ../src/x.txt` names ../.., not carried into the sandbox: the sandbox "
        "mirrors only what lies inside the folder that holds the project",
        "`./main ../data/bfs/graph.txt ../.. ../src/x.txt` names ../src/x.txt, not carried into the sandbox: the "
        "sandbox's own src/ is where it would go",
        "`./main ../data/bfs/graph.txt ../.. ../src/x.txt` names ../data/bfs/graph.txt, not carried into the sandbox: "
        "it holds 8 bytes, more than the 4 bytes left of the 4 bytes a check may carry",
    ]


def test_a_named_input_found_nowhere_is_missing(tmp_path):
    root = project(tmp_path)
    with LocalSandbox(use_bwrap=False) as box:
        box.put_path(root, "src")
        box.put({"src/made_by_the_build.txt": "x"})
        notes = missing_inputs("./main ../data/bfs/none.txt ../data/bfs/graph.txt made_by_the_build.txt 0.5f 100",
                               root, box)
    assert len(notes) == 1 and "names ../data/bfs/none.txt, which exists neither in the project nor beside it" in notes[0]
