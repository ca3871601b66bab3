"""What goes into the sandbox (Job) and what comes back (Result)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from grpokit.sandbox.limits import Limits


@dataclass
class Job:
    """One program to grade.

    Function mode (`tests` given): the program runs, then each entry of `tests`
    (Python code: asserts, or `check(candidate)` calls) runs in the grader with
    the program's names bound to handles on its objects; each entry is one test.
    Stdin/stdout mode (`cases` given): the program runs once per
    {"input": str, "output": str} case with that input on stdin.
    entry_point: the program's function the tests are about (HumanEval's), bound for the
    tests by that name even when it shadows a builtin; tests see no other program name
    unless their code mentions it.
    helpers: trusted Python source (the row's prompt, say) defining names the tests call
        besides the program's (HumanEval/32's `poly`). It runs in the grader, and the names
        it defines win over the program's: redefining a helper cannot forge a pass.
    """

    program: str
    tests: list[str] | None = None
    cases: list[dict] | None = None
    limits: Limits = field(default_factory=Limits)
    entry_point: str | None = None
    helpers: str | None = None

    def __post_init__(self) -> None:
        if (self.tests is None) == (self.cases is None):
            raise ValueError("a Job needs exactly one of tests= (Python test code) or cases= (stdin/stdout pairs)")

    @property
    def mode(self) -> str:
        return "function" if self.tests is not None else "io"

    def frames(self, job_id: int) -> tuple[dict, bytes]:
        """The public header (may reach the program) and the secret (never does)."""
        header = {"op": "job", "id": job_id, "mode": self.mode, "program": _text(self.program),
                  "limits": self.limits.as_dict()}
        if self.tests is not None:
            secret = {"tests": [_text(t) for t in self.tests], "entry_point": self.entry_point,
                      "helpers": self.helpers}
        else:
            header["inputs"] = [_text(c.get("input", "")) for c in self.cases]
            secret = {"outputs": [_text(c.get("output", "")) for c in self.cases]}
        return header, json.dumps(secret).encode("utf-8", "surrogatepass")


def _text(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return "\n".join(map(str, value))
    return "" if value is None else str(value)


@dataclass
class Result:
    """The verdict for one Job.

    status: passed | failed | error (program raised before tests) | timeout | crashed (died
        mid-tests) | cancelled (step budget) | sandbox_error (the sandbox broke; not the program).
    passed/total: tests that ran to the end and passed / tests given.
    all_ran: every test ran to the end (a run counts only then).
    isolation: the isolation level in force ("full", "partial", "basic").
    """

    status: str
    passed: int = 0
    total: int = 0
    all_ran: bool = False
    error: str | None = None
    stdout: str = ""
    stderr: str = ""
    duration_s: float = 0.0
    isolation: str = "unknown"
    tests: list[bool] = field(default_factory=list)

    @property
    def score(self) -> float | None:
        """Share of tests passed; None when the sandbox could not judge."""
        if self.status in ("cancelled", "sandbox_error"):
            return None
        if self.status == "timeout":
            return 0.0  # a program past its time limit fails as a whole, like a judge's TLE
        if not self.total:
            return 0.0
        return self.passed / self.total

    @classmethod
    def from_message(cls, message: dict, isolation: str) -> "Result":
        def num(key, kind):
            value = message.get(key)
            return value if type(value) is kind else kind()

        return cls(
            status=str(message.get("status", "sandbox_error")),
            passed=num("passed", int),
            total=num("total", int),
            all_ran=message.get("all_ran") is True,
            error=message.get("error"),
            stdout=str(message.get("stdout", "")),
            stderr=str(message.get("stderr", "")),
            duration_s=float(message.get("duration_s") or 0.0),
            isolation=isolation,
            tests=[bool(t) for t in message.get("tests", []) if type(t) is bool],
        )
