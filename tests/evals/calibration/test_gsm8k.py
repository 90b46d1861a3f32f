"""GSM8K read from its JSONL (a synthetic file in the format: see data/README.md), each problem's
answer the number after '####'; a reply's final number read and compared as a number; the
endpoint's failure an ERROR, never a FAIL."""

from decimal import Decimal
from pathlib import Path

import pytest

from app.chat.models import ModelCallError
from evals.calibration.calibrate import CalibrationError
from evals.calibration.gsm8k import CHECK, check, final_answer, load_problems, number, run_suite
from tests.fakes import ScriptedModel, say

DATA = Path(__file__).parent / "data"


def test_the_gsm8k_format_loads():
    problems = load_problems(DATA / "gsm8k-synthetic.jsonl", 100)
    assert [p.id for p in problems] == [f"gsm8k-{n}" for n in range(1, 6)]
    assert [p.answer for p in problems] == [126, 10, 160, 1700, 15]  # "#### 1,700" is 1700
    assert problems[0].question.startswith("A bakery sells muffins")
    assert problems[0].solution.endswith("It made 42 * 3 = $<<42*3=126>>126.")
    assert len(load_problems(DATA / "gsm8k-synthetic.jsonl", 2)) == 2


@pytest.mark.parametrize("line, says", [
    ("not json", "g.jsonl:2: not a JSON object (Expecting value"),
    ('["question", "answer"]', "g.jsonl:2: not a JSON object but list"),
    ('{"question": "How many?"}', "g.jsonl:2: no answer (text)"),
    ('{"question": "", "answer": "#### 3"}', "g.jsonl:2: no question (text)"),
    ('{"question": "How many?", "answer": 3}', "g.jsonl:2: no answer (text)"),
    ('{"question": "How many?", "answer": "It is 3."}',
     "g.jsonl:2: the answer has no '#### <number>' at its end"),
    ('{"question": "How many?", "answer": "#### three"}',
     "g.jsonl:2: the answer after '####' is not a number: 'three'"),
    ('{"question": "How many?", "answer": "#### nan"}', "is not a number: 'nan'"),
])
def test_a_bad_line_is_a_file_line_error(tmp_path, line, says):
    path = tmp_path / "g.jsonl"
    path.write_text('{"question": "Fine?", "answer": "#### 1"}\n' + line + "\n\n")
    with pytest.raises(CalibrationError) as exc:
        load_problems(path, 10)
    assert says in str(exc.value)


def test_an_empty_or_missing_file(tmp_path):
    empty = tmp_path / "g.jsonl"
    empty.write_text("\n")
    with pytest.raises(CalibrationError, match="g.jsonl:1: no problem"):
        load_problems(empty, 10)
    with pytest.raises(CalibrationError, match="nope.jsonl: No such file"):
        load_problems(tmp_path / "nope.jsonl", 10)
    empty.write_bytes(b'{"question": "caf\xe9", "answer": "#### 1"}\n')
    with pytest.raises(CalibrationError, match="g.jsonl:1: not a JSON object"):
        load_problems(empty, 10)


def test_the_final_number_of_a_reply():
    assert number("$1,234.50") == Decimal("1234.50") and number("12x") is None
    assert final_answer("3 + 4 = 7, so 7 * 2 = 14.\n#### 14") == (14, "#### 14")
    assert final_answer("#### 3 then 4\nI said #### $1,200.00 apples") == (1200,
                                                                           "#### $1,200.00")
    assert final_answer("It makes 12 pies, then 30 in all.") == (30, "30")  # no ####: the last
    assert final_answer("#### none\nBut 8 cups and 9 bowls") == (9, "9")
    assert final_answer("I cannot tell.") == (None, "")
    assert final_answer("It owes -5 dollars") == (-5, "-5")


def test_checked_as_numbers():
    (problem,) = [p for p in load_problems(DATA / "gsm8k-synthetic.jsonl", 5)
                  if p.answer == 1700]
    assert check(problem, "In all, $1,700.00\n#### 1,700.00").passed
    wrong = check(problem, "1250 + 30 * 15 = 1250 + 450.\n#### 1,650")
    assert (wrong.kind, wrong.passed) == (CHECK, False)
    assert wrong.reason == "expected 1700, the reply answers 1650 ('#### 1,650')"
    assert check(problem, "Too hard.").reason == "expected 1700; the reply gives no number"


async def test_each_problem_goes_to_the_endpoint_once():
    problems = load_problems(DATA / "gsm8k-synthetic.jsonl", 3)
    endpoint = ScriptedModel(say("126 dollars\n#### 126"), say("#### 11"),
                             ModelCallError("timed out"))
    results = await run_suite(problems, endpoint, concurrency=1)
    assert [r.status for r in results] == ["PASS", "FAIL", "ERROR"]
    assert results[1].attempts[0].checks[0].reason.startswith("expected 10, the reply answers 11")
    assert results[2].attempts[0].error == "the endpoint failed: timed out"
    sent = endpoint.requests[0]["messages"]
    assert sent[0]["role"] == "system" and "#### <number>" in sent[0]["content"]
    assert sent[1] == {"role": "user", "content": problems[0].question}
    assert results[0].attempts[0].transcript.answer == "126 dollars\n#### 126"
    assert results[0].prompt == problems[0].question
