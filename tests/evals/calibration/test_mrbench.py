"""MRBench as a suite: each dialogue to a tutoring endpoint over real HTTP, the reply judged
on MRBench's dimensions with the same harness, the report and artifact as for cases."""

from evals.calibration.mrbench import dialogue_messages


def test_an_mrbench_history_becomes_chat_messages():
    history = "Tutor: Walk me through it.\nStudent: I added 3 and 4\nso 8.\nTutor: Hmm?"
    assert dialogue_messages(history + "\nStudent: 8") == [
        {"role": "assistant", "content": "Walk me through it."},
        {"role": "user", "content": "I added 3 and 4\nso 8."},
        {"role": "assistant", "content": "Hmm?"}, {"role": "user", "content": "8"}]
    assert dialogue_messages("no speakers here") == [{"role": "user",
                                                      "content": "no speakers here"}]
    assert dialogue_messages("Q: 2+2?\nTutor: go on, my student: try") == [
        {"role": "user", "content": "Q: 2+2?"},
        {"role": "assistant", "content": "go on, my student: try"}]
