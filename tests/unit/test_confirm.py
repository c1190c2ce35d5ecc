"""The CLI's questions before it changes a cluster: without a terminal nothing can answer, so the
command stops with exit 2 and says to add --yes (it used to end in an EOFError traceback)."""

from __future__ import annotations

import io

import pytest

from console.cli import confirm
from console.cli.exits import Exit, exit_for
from console.core.errors import NotATerminal


@pytest.mark.parametrize(
    "ask",
    [
        lambda: confirm.said_yes("Remove these 3 settings? [yes/no] "),
        lambda: confirm.typed_name("Type it: ", "sandbox"),
    ],
    ids=["said_yes", "typed_name"],
)
def test_without_a_terminal_every_question_refuses_with_exit_2(monkeypatch: pytest.MonkeyPatch, ask) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("yes\nsandbox\n"))  # piped input is not an answer
    with pytest.raises(NotATerminal, match="Not at a terminal") as caught:
        ask()
    assert "--yes" in caught.value.hint
    assert exit_for(caught.value) is Exit.UNUSABLE


def test_at_a_terminal_the_answer_decides(at_a_terminal) -> None:
    at_a_terminal("yes", "sandbox", "no")
    assert confirm.said_yes("? ") is True
    assert confirm.typed_name("? ", "sandbox") is True
    assert confirm.said_yes("? ") is False


def test_end_of_input_at_a_terminal_is_no(at_a_terminal) -> None:
    at_a_terminal()
    assert confirm.said_yes("? ") is False
    assert confirm.typed_name("? ", "sandbox") is False


def test_the_question_goes_to_stderr_so_stdout_keeps_only_the_output(at_a_terminal, capsys) -> None:
    at_a_terminal("sandbox")
    assert confirm.typed_name("Type the cluster's name (sandbox) to send the cancel: ", "sandbox")
    out, err = capsys.readouterr()
    assert out == "" and err == "Type the cluster's name (sandbox) to send the cancel: "
