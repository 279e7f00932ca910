"""Bad inputs and the exact errors they get: the source of docs/errors.md and its test.

Each case is run for real (``run_case``); ``docs/errors.md`` is generated from the outputs by
``scripts/gen_errors_doc.py`` and ``tests/test_errors_doc.py`` checks the file is current, so the
table can never drift from what users see.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import subprocess
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from counterfact.orchestrator.cli import main
from tests.echo_server import echo_server

AGENT = """\
def run(ctx):
    return "yes"

RUNNER = 3

def returns(ctx):
    return RETURN

def broken(ctx):
    raise RuntimeError(f"{ctx.arm.id} seed {ctx.seed}: the service is down")

def contract(ctx):
    return 42
"""

BASE = """\
name: demo
runner: agent.py:run
executor: {kind: local}
arms:
  - id: base
  - id: alt
    facets: {model: large}
"""


@dataclass(frozen=True)
class Case:
    """One bad input."""

    what: str
    """What is wrong, in words (the table's first column)."""
    config: str = BASE
    """The sweep file's text (``.yaml`` unless ``suffix`` says otherwise)."""
    args: tuple[str, ...] = ("validate", "{cfg}")
    """CLI arguments; ``{cfg}`` is the config path."""
    suffix: str = ".yaml"
    returns: str | None = None
    """For runner-return cases: the Python expression the runner returns."""
    expect_code: int = 2
    group: str = "config"
    raw: bytes | None = None
    """Bytes to write instead of ``config`` (for encoding errors)."""
    setup: Callable[[Path], None] | None = None
    """Prepares the case's folder (``{dir}``) before the command runs (a planted run directory)."""
    planted: str = ""
    """What ``setup`` planted, in words (the table's input column)."""
    teardown: Callable[[Path], None] | None = None
    """Undoes what ``setup`` did that would keep the folder from being removed."""
    reason: str | None = None
    """For a sweep that ends but leaves rows in doubt: the doubt code whose first reason in
    ``verdicts.jsonl`` is the table's error."""


def _hard_linked_runs(folder: Path) -> None:
    (folder / "out").mkdir()
    (folder / "out" / "runs.jsonl").write_text("")
    os.link(folder / "out" / "runs.jsonl", folder / "notes.txt")


def _sweep_json_directory(folder: Path) -> None:
    (folder / "out" / "sweep.json").mkdir(parents=True)
    (folder / "out" / "runs.jsonl").write_text("")


def _other_files(folder: Path) -> None:
    (folder / "myproject").mkdir()
    (folder / "myproject" / "notes.txt").write_text("mine")


def _deep_scenarios(folder: Path) -> None:
    (folder / "set.jsonl").write_text(
        '{"id": "a", "inputs": {"x": ' + "[" * 5000 + "]" * 5000 + "}}\n"
    )


def _yaml_word_scenarios(folder: Path) -> None:
    (folder / "set.yaml").write_text("- {id: a, inputs: {flag: on}}\n")


def _non_decimal_scenarios(folder: Path) -> None:
    (folder / "set.yaml").write_text("- {id: a, inputs: {port: 010}}\n")


def _judge_in_questions(folder: Path) -> None:
    (folder / "set.jsonl").write_text(
        '{"id": "q0", "reference": "Canberra", "expect": {"kind": "judge", "model": "m", '
        '"base_url": "http://attacker.example/v1", "api_key_env": "OPENAI_API_KEY"}}\n'
    )


def _code_in_questions(folder: Path) -> None:
    (folder / "set.jsonl").write_text(
        '{"id": "q0", "reference": "touch PWNED", "expect": {"kind": "custom", "target": '
        '"os:popen"}}\n'
    )


def _code_in_a_csv_cell(folder: Path) -> None:
    (folder / "set.csv").write_text("id,reference,expect\nq0,yes,tools.py:check\n")


def _undeclared_check(folder: Path) -> None:
    (folder / "set.jsonl").write_text('{"id": "q0", "reference": "yes", "expect": "lenient"}\n')


def _call_without_question(folder: Path) -> None:
    body = {"model": "m", "messages": [{"role": "system", "content": "You answer."}]}
    (folder / "call.json").write_text(json.dumps(body))


def _trace_without_genai(folder: Path) -> None:
    span = {"spanId": "ab12", "name": "GET /health", "attributes": []}
    (folder / "trace.json").write_text(
        json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
    )


def _failed_call(folder: Path) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "Q?"}]}
    record = {"request": body, "response": {"error": {"message": "overloaded"}}, "status": 503}
    (folder / "call.json").write_text(json.dumps(record))


CHAT = """\
name: demo
runner: {kind: chat, model: m, prompt: "{q}"}
executor: {kind: local, concurrency: 1}
samples: 2
scenarios: [{id: s, inputs: {q: "capital?"}}]
arms:
  - id: base
  - id: alt
    facets: {temperature: 1}
"""
"""A chat sweep; the hostile server's URL comes from ``OPENAI_BASE_URL`` (see :func:`_server`)."""

_SERVERS: dict[Path, contextlib.ExitStack] = {}
"""The hostile server each case's folder is using, stopped by :func:`_stop_server`."""


@contextlib.contextmanager
def _environ(values: dict[str, str]) -> Iterator[None]:
    before = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _server(route: str) -> Callable[[Path], None]:
    """A setup starting tests/echo_server.py with ``OPENAI_BASE_URL`` at its ``route``."""

    def setup(folder: Path) -> None:
        stack = contextlib.ExitStack()
        root = stack.enter_context(echo_server())
        env = {"OPENAI_BASE_URL": f"{root}{route}", "OPENAI_API_KEY": "none"}
        stack.enter_context(_environ(env))
        _SERVERS[folder] = stack

    return setup


def _stop_server(folder: Path) -> None:
    _SERVERS.pop(folder).close()


_ROOTS: dict[Path, str] = {}
"""The echo server's root URL each judge case's folder is using (shown as ``<server>/``)."""

JUDGE = BASE + (
    "comparator: {kind: judge, model: m, base_url: 'BASE_URL', api_key_env: JUDGE_KEY, "
    "recheck: 0MORE}\n"
)
"""The base config judged by a model judge at ``BASE_URL`` (a case fills it in)."""


def _judge_server(folder: Path) -> None:
    """The echo server, its root recorded for the error text, and ``JUDGE_KEY`` set."""
    stack = contextlib.ExitStack()
    _ROOTS[folder] = stack.enter_context(echo_server())
    stack.enter_context(_environ({"JUDGE_KEY": "none"}))
    _SERVERS[folder] = stack


def _stop_judge_server(folder: Path) -> None:
    _ROOTS.pop(folder, None)
    _stop_server(folder)


def _judge_case(
    what: str, route: str, planted: str, code: int = 0, reason: str | None = None, more: str = ""
) -> Case:
    """A sweep judged by a model judge at the echo server's ``route`` (or at ``route`` itself
    when it is a URL)."""
    url = route if route.startswith("http") else f"http://SERVER/{route}"
    return Case(
        what,
        JUDGE.replace("BASE_URL", url).replace("MORE", more),
        args=("run", "{cfg}", "--out", "{dir}/out", "--no-report"),
        expect_code=code,
        group="records",
        setup=_judge_server,
        teardown=_stop_judge_server,
        planted=f"a judge whose server {planted}",
        reason=reason,
    )


def _chat_case(what: str, route: str, planted: str, config: str = CHAT) -> Case:
    return Case(
        what,
        config,
        args=("run", "{cfg}", "--out", "{dir}/out", "--no-report"),
        expect_code=1,
        group="records",
        setup=_server(route),
        teardown=_stop_server,
        planted=f"a chat runner whose server {planted}",
    )


def _finished_run(folder: Path) -> Path:
    """Run the base sweep to its end in ``folder/out``; the run directory."""
    (folder / "sweep.yaml").write_text(BASE, encoding="utf-8")
    args = ["run", str(folder / "sweep.yaml"), "--out", str(folder / "out"), "--no-report"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return folder / "out"


def _spliced_runs(folder: Path) -> None:
    runs = _finished_run(folder) / "runs.jsonl"
    record = json.loads(runs.read_text().splitlines()[0]) | {"arm": "other"}
    with runs.open("a") as handle:
        handle.write(json.dumps(record) + "\n")


def _immutable(folder: Path, on: bool) -> None:
    """``chattr +i`` (``-i``) on ``folder/out`` and its ``.lock``: what a read-only directory is
    to root, whom ``chmod`` does not stop (developers and CI run as root)."""
    out = folder / "out"
    paths = [str(out / ".lock"), str(out)] if on else [str(out), str(out / ".lock")]
    done = subprocess.run(["chattr", "+i" if on else "-i", *paths], capture_output=True)
    if on and done.returncode != 0:
        msg = f"this case needs chattr +i (root on ext4 or similar): {done.stderr!r}"
        raise RuntimeError(msg)


def _read_only_run(folder: Path) -> None:
    _finished_run(folder)
    _immutable(folder, on=True)


def _zip_declaring(path: Path, declared: dict[str, int]) -> None:
    """A small zip whose central directory declares each entry's uncompressed size as given."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("header.json", "{}")
        for name in declared:
            archive.writestr(name, "{}")
    raw = bytearray(path.read_bytes())
    at = raw.find(b"PK\x01\x02")
    while at >= 0:
        name_len = struct.unpack_from("<H", raw, at + 28)[0]
        name = raw[at + 46 : at + 46 + name_len].decode()
        if name in declared:
            struct.pack_into("<I", raw, at + 24, declared[name])
        at = raw.find(b"PK\x01\x02", at + 4)
    path.write_bytes(bytes(raw))


def _sparse(path: Path, size: int) -> None:
    with path.open("wb") as handle:
        handle.truncate(size)  # nothing written: the limit is checked before reading


def _log_not_zip(folder: Path) -> None:
    (folder / "log.eval").write_bytes(b"not a zip")


def _log_huge_sample(folder: Path) -> None:
    _zip_declaring(folder / "log.eval", {"samples/q1_epoch_1.json": 0xFFFF_FFF0})


def _log_huge_entry(folder: Path) -> None:
    _zip_declaring(folder / "log.eval", {"summaries.json": 0xFFFF_FFF0})


def _log_huge_total(folder: Path) -> None:
    _zip_declaring(folder / "log.eval", {f"part{i}.json": 1 << 30 for i in range(3)})


def _log_huge_eval(folder: Path) -> None:
    _sparse(folder / "log.eval", (1 << 30) + 1)


def _log_huge_json(folder: Path) -> None:
    _sparse(folder / "log.json", (512 << 20) + 1)


def _import_log(name: str) -> tuple[str, ...]:
    log = "{dir}/" + name
    arms = ("--arm", f"a={log}", "--arm", f"b={log}", "--baseline", "a")
    return ("import", "inspect", *arms, "--out", "{dir}/out")


def _lock_symlink(folder: Path) -> None:
    (folder / "out").mkdir()
    (folder / "out" / ".lock").symlink_to(folder / "victim")


BOMB_TEXT = "bomb: &a [x, x, x, x, x, x, x, x, x]\nb0: &b0 [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nb1: &b1 [*b0, *b0, *b0, *b0, *b0, *b0, *b0, *b0, *b0]\nb2: &b2 [*b1, *b1, *b1, *b1, *b1, *b1, *b1, *b1, *b1]\nb3: &b3 [*b2, *b2, *b2, *b2, *b2, *b2, *b2, *b2, *b2]\nb4: &b4 [*b3, *b3, *b3, *b3, *b3, *b3, *b3, *b3, *b3]\nb5: &b5 [*b4, *b4, *b4, *b4, *b4, *b4, *b4, *b4, *b4]\nb6: &b6 [*b5, *b5, *b5, *b5, *b5, *b5, *b5, *b5, *b5]\nb7: &b7 [*b6, *b6, *b6, *b6, *b6, *b6, *b6, *b6, *b6]\n"
"""Nine references to nine references ... eight levels deep: 9**9 values once expanded."""


def _replace(old: str, new: str) -> str:
    assert old in BASE, old
    return BASE.replace(old, new)


BOMB = BOMB_TEXT

CASES: list[Case] = [
    Case("YAML syntax error", "name: demo\narms: [base\n"),
    Case("top level is not a mapping", "- name: demo\n"),
    Case("file has another extension", BASE, suffix=".json"),
    Case("unknown top-level key (typo)", BASE + "sample: 5\n"),
    Case("samples below 2 (rule 1)", BASE + "samples: 1\n"),
    Case("samples of the wrong type", BASE + "samples: '5'\n"),
    Case("required keys missing", "arms: []\n"),
    Case("name with a space", _replace("name: demo", "name: my demo")),
    Case("unknown key inside an arm", _replace("facets: {model: large}", "facet: {model: large}")),
    Case("facets not a mapping", _replace("facets: {model: large}", "facets: [model]")),
    Case(
        "one facet leaf declared twice",
        _replace("facets: {model: large}", "facets: {model: {size: l}, model.size: m}"),
    ),
    Case("fewer than two arms", _replace("  - id: alt\n    facets: {model: large}\n", "")),
    Case("duplicate arm id", _replace("id: alt", "id: base")),
    Case("blank arm id", _replace("id: alt", "id: ' '")),
    Case("unknown baseline", BASE + "baseline: prod\n"),
    Case("challenger that declares nothing", _replace("    facets: {model: large}\n", "")),
    Case(
        "two arms with the same configuration", BASE + "  - id: alt2\n    facets: {model: large}\n"
    ),
    Case("unknown comparator", BASE + "comparator: {kind: fuzzy}\n"),
    Case("alpha out of range", BASE + "statistics: {alpha: 1.5}\n"),
    Case("unknown multiplicity adjustment", BASE + "statistics: {adjust: bonferroni}\n"),
    Case("unknown pairing", BASE + "statistics: {pairing: arms}\n"),
    Case(
        "placebo arm that declares facets (rule 17)",
        BASE + "  - id: aa\n    placebo: true\n    facets: {model: small}\n",
    ),
    Case(
        "baseline declared as a placebo",
        _replace("  - id: base\n", "  - id: base\n    placebo: true\n"),
    ),
    Case(
        "sequential cap below samples (rule 19)",
        BASE + "samples: 8\nsequential: {max_samples: 4}\n",
    ),
    Case("sequential wave below 1", BASE + "sequential: {max_samples: 40, wave: 0}\n"),
    Case(
        "sequential with bisect",
        BASE + "sequential: {max_samples: 40}\nbisect: {suspects: [tool:a]}\n",
        args=("bisect", "{cfg}"),
        group="cli",
    ),
    Case("budget limit that is not positive", BASE + "budget: {usd: 0}\n"),
    Case(
        "concurrency below 1",
        _replace("executor: {kind: local}", "executor: {kind: local, concurrency: 0}"),
    ),
    Case(
        "requests_per_minute that is not positive",
        _replace(
            "executor: {kind: local}",
            "executor: {kind: local, rate_limit: {requests_per_minute: 0}}",
        ),
    ),
    Case("unknown decide mode", BASE + "statistics: {decide: vote}\n"),
    Case("min_effect out of range", BASE + "statistics: {decide: test, min_effect: 1.5}\n"),
    Case("unknown alternative", BASE + "statistics: {alternative: bigger}\n"),
    Case(
        "alternative other than greater with bisect",
        BASE + "statistics: {alternative: less}\nbisect: {suspects: [tool:a]}\n",
        args=("bisect", "{cfg}"),
        group="cli",
    ),
    Case(
        "scenario file that does not exist",
        BASE.replace("name: demo", "name: demo\nscenarios: {file: questions.jsonl}"),
    ),
    Case("runner_files pattern that matches nothing", BASE + "runner_files: ['data/*.json']\n"),
    Case(
        "sequential minimal effect out of range",
        BASE + "sequential: {max_samples: 40, min_effect: 0}\n",
    ),
    Case("unknown bisection decision rule", BASE + "bisect: {suspects: [t1], decide: vote}\n"),
    Case("threshold out of range", BASE + "comparator: {threshold: 1.5}\n"),
    Case("regex comparator without a pattern", BASE + "comparator: {kind: regex}\n"),
    Case(
        "regex pattern that does not compile", BASE + "comparator: {kind: regex, pattern: '(a'}\n"
    ),
    Case(
        "regex pattern that matches nothing in the reference",
        BASE + "reference: Canberra\ncomparator: {kind: regex, pattern: 'Answer: (\\w+)'}\n",
    ),
    Case("embedding similarity with neither embedder nor model", BASE + "similarity: embedding\n"),
    Case(
        "embedding model without the embeddings extra",
        BASE + "similarity: {kind: embedding, model: all-MiniLM-L6-v2}\n",
    ),
    Case("custom comparator without target", BASE + "comparator: {kind: custom}\n"),
    Case(
        "tolerance on a non-numeric comparator", BASE + "comparator: {kind: exact, tolerance: 1}\n"
    ),
    Case(
        "timeout_s on the local executor",
        _replace("executor: {kind: local}", "executor: {kind: local, timeout_s: 5}"),
    ),
    Case(
        "retries without retry_on",
        _replace("executor: {kind: local}", "executor: {kind: local, retries: 2}"),
    ),
    Case(
        "scenarios and top-level reference together",
        BASE + "reference: ok\nscenarios: [{id: q1}]\n",
    ),
    Case("duplicate scenario id", BASE + "scenarios: [{id: q1}, {id: q1}]\n"),
    Case("ablate_each lists an id twice", BASE + "ablate_each: [tool:a, tool:a]\n"),
    Case(
        "numeric comparator, reference without a number",
        BASE + "reference: forty-two\ncomparator: {kind: numeric}\n",
    ),
    Case(
        "a YAML alias inside its own anchor",
        _replace("facets: {model: large}", "facets: &f {x: *f}"),
    ),
    Case("config file is not UTF-8", raw=b"name: d\xe9mo\n"),
    Case("runner file does not exist", _replace("agent.py:run", "agents/missing.py:run")),
    Case("runner module cannot be imported", _replace("agent.py:run", "no_such_package.agent:run")),
    Case("runner attribute missing", _replace("agent.py:run", "agent.py:runn")),
    Case("runner not callable", _replace("agent.py:run", "agent.py:RUNNER")),
    Case("runner without ':callable'", _replace("agent.py:run", "agent.py")),
    Case("bisect without a bisect section", args=("bisect", "{cfg}"), group="cli"),
    Case("--set without '='", args=("validate", "{cfg}", "--set", "samples"), group="cli"),
    Case("--set that breaks a rule", args=("validate", "{cfg}", "--set", "samples=0"), group="cli"),
    Case("unknown --executor", args=("run", "{cfg}", "--executor", "slurm"), group="cli"),
    Case("config file missing", args=("validate", "{dir}/nope.yaml"), group="cli"),
    Case("report on a folder without records", args=("report", "{dir}"), group="records"),
    Case("export on a path that is not a folder", args=("export", "{dir}/nope"), group="records"),
    Case(
        "every run fails (each with its own message)",
        _replace("agent.py:run", "agent.py:broken"),
        args=("run", "{cfg}", "--out", "{dir}/out", "--no-report"),
        expect_code=1,
        group="records",
    ),
    Case(
        "the runner breaks the return contract on every arm's first run",
        _replace("agent.py:run", "agent.py:contract"),
        args=("run", "{cfg}", "--out", "{dir}/out", "--no-report"),
        expect_code=1,
        group="records",
    ),
    Case("runner returns an int", returns="42", group="return", expect_code=1),
    Case(
        "runner returns a mapping without output",
        returns="{'answer': 'yes'}",
        group="return",
        expect_code=1,
    ),
    Case("runner output not text", returns="{'output': 7}", group="return", expect_code=1),
    Case(
        "manifest not a mapping",
        returns="{'output': 'yes', 'manifest': ['bm25']}",
        group="return",
        expect_code=1,
    ),
    Case(
        "non-finite cost",
        returns="{'output': 'yes', 'cost': {'usd': float('nan')}}",
        group="return",
        expect_code=1,
    ),
    Case(
        "cost not a number",
        returns="{'output': 'yes', 'cost': {'tokens': '12'}}",
        group="return",
        expect_code=1,
    ),
    Case("a key given twice in one mapping", BASE + "name: again\n"),
    Case("a YAML tag whose value cannot be read", BASE + "samples: !!int 0x1F demo\n"),
    Case(
        "a YAML alias bomb",
        BASE + "facets_bomb:\n" + "".join("  " + line + "\n" for line in BOMB.splitlines()),
    ),
    Case("values nested too deeply", BASE + "deep: " + "[" * 70 + "]" * 70 + "\n"),
    Case(
        "text that is not valid Unicode (a lone surrogate)", _replace("id: alt", 'id: "alt\\udcff"')
    ),
    Case("samples above the cap", BASE + "samples: 100000000\n"),
    Case(
        "a plan larger than the cap",
        BASE
        + "samples: 1000000\nscenarios: ["
        + ", ".join(f"{{id: s{i}}}" for i in range(30))
        + "]\n",
    ),
    Case(
        "a grid with too many combinations",
        BASE
        + "grid: {"
        + ", ".join(f"g{i}: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]" for i in range(6))
        + "}\n",
    ),
    Case(
        "a tolerance that is not a finite number",
        BASE + "comparator: {kind: numeric, tolerance: .nan}\n",
    ),
    Case(
        "a regex pattern that backtracks catastrophically on the reference",
        BASE
        + "reference: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!'\n"
        "comparator: {kind: regex, pattern: '(a|a)+$'}\n",
    ),
    Case(
        "a question's expect of an unknown kind",
        BASE + "scenarios:\n  - {id: q1, reference: '42', expect: {kind: numbers}}\n",
    ),
    Case(
        "a question's numeric expect, its reference without a number",
        BASE + "scenarios:\n  - {id: q1, reference: many, expect: {kind: numeric, tolerance: 1}}\n",
    ),
    Case(
        "a question's one-of expect, its reference naming no option",
        BASE
        + "scenarios:\n  - {id: q1, reference: Rome, expect: {kind: one-of, options: [Paris, London]}}\n",
    ),
    Case(
        "a runner path too long for the file system",
        BASE.replace("agent.py:run", "x" * 5000 + ".py:run"),
    ),
    Case("a sweep name that is a path step", _replace("name: demo", "name: '..'")),
    Case(
        "--fresh on a folder that is not a run directory",
        args=("run", "{cfg}", "--out", "{dir}", "--fresh"),
        group="cli",
    ),
    Case(
        "a run directory whose runs.jsonl has a second hard link",
        args=("run", "{cfg}", "--out", "{dir}/out"),
        group="cli",
        setup=_hard_linked_runs,
        planted="out/runs.jsonl hard-linked to notes.txt",
    ),
    Case(
        "a run directory whose .lock is a symlink",
        args=("run", "{cfg}", "--out", "{dir}/out"),
        group="cli",
        setup=_lock_symlink,
        planted="out/.lock a symlink to victim",
    ),
    Case(
        "a run directory whose sweep.json is a directory",
        args=("run", "{cfg}", "--out", "{dir}/out"),
        group="cli",
        setup=_sweep_json_directory,
        planted="out/sweep.json a directory",
    ),
    Case(
        "--out a folder of other files, without --fresh",
        args=("run", "{cfg}", "--out", "{dir}/myproject"),
        group="cli",
        setup=_other_files,
        planted="myproject/notes.txt and no records",
    ),
    Case("a sample count out of range", BASE + "samples: 1e400\n"),
    Case(
        "a scenario file 5,000 levels deep",
        BASE + "scenarios: {file: set.jsonl}\n",
        setup=_deep_scenarios,
    ),
    Case(
        "a YAML 1.1 boolean word in a scenario file",
        BASE + "scenarios: {file: set.yaml}\n",
        setup=_yaml_word_scenarios,
    ),
    Case(
        "a question file that names code as a check",
        BASE + "scenarios: {file: set.jsonl}\n",
        setup=_code_in_questions,
        planted="set.jsonl: expect {kind: custom, target: os:popen}",
    ),
    Case(
        "a CSV expect cell that names code",
        BASE + "scenarios: {file: set.csv}\n",
        setup=_code_in_a_csv_cell,
        planted="set.csv: expect cell tools.py:check",
    ),
    Case(
        "a question file's check name the sweep file does not declare",
        BASE + "checks: {strict: agent.py:run}\nscenarios: {file: set.jsonl}\n",
        setup=_undeclared_check,
        planted='set.jsonl: expect "lenient"',
    ),
    Case(
        "a recorded call with no user message",
        args=("blame", "{dir}/call.json", "--out", "{dir}/out"),
        group="cli",
        setup=_call_without_question,
        planted="call.json: a request whose only message is the system's",
    ),
    Case(
        "an OTLP export with no GenAI span",
        args=("blame", "{dir}/trace.json", "--out", "{dir}/out"),
        group="cli",
        setup=_trace_without_genai,
        planted="trace.json: one HTTP span, no gen_ai attributes",
    ),
    Case(
        "a recorded call that failed",
        args=("blame", "{dir}/call.json", "--out", "{dir}/out"),
        group="cli",
        setup=_failed_call,
        planted="call.json: a record with status 503",
    ),
    Case("a check name that is a comparator kind", BASE + "checks: {exact: agent.py:run}\n"),
    Case("a check that is not a target", BASE + "checks: {strict: agent}\n"),
    Case("a number YAML reads as text (no dot)", BASE + "statistics: {alpha: 1e-300}\n"),
    Case("a control character in the sweep file", raw=(BASE + 'x: "a\x01b"\n').encode()),
    Case(
        "manifest nested too deeply",
        returns="{'output': 'yes', 'manifest': "
        "__import__('functools').reduce(lambda m, _: {'k': m}, range(70), {})}",
        group="return",
        expect_code=1,
    ),
    Case(
        "manifest key not text",
        returns="{'output': 'yes', 'manifest': {1: 'bm25'}}",
        group="return",
        expect_code=1,
    ),
    Case(
        "manifest value not JSON data",
        returns="{'output': 'yes', 'manifest': {'k': {1, 2}}}",
        group="return",
        expect_code=1,
    ),
    Case(
        "a non-decimal integer in a scenario file",
        BASE + "scenarios: {file: set.yaml}\n",
        setup=_non_decimal_scenarios,
    ),
    Case(
        "a YAML 1.1 boolean word in the sweep file",
        _replace("facets: {model: large}", "facets: {model: large, verbose: yes}"),
    ),
    Case("a non-decimal integer in the sweep file", BASE + "samples: 0x10\n"),
    Case(
        "a run directory with another sweep's records spliced in",
        args=("run", "{cfg}", "--out", "{dir}/out"),
        group="cli",
        setup=_spliced_runs,
        planted="out/ a finished run of sweep.yaml, then a record of arm 'other' appended",
    ),
    Case(
        "a read-only run directory on resume",
        args=("run", "{cfg}", "--out", "{dir}/out"),
        group="cli",
        setup=_read_only_run,
        teardown=lambda folder: _immutable(folder, on=False),
        planted="out/ a finished run of sweep.yaml, made read-only (chattr +i)",
    ),
    Case(
        "an Inspect AI log that is not a zip",
        args=_import_log("log.eval"),
        group="cli",
        setup=_log_not_zip,
        planted="log.eval holding the bytes `not a zip`",
    ),
    Case(
        "an Inspect AI log whose sample declares more than 64 MiB",
        args=_import_log("log.eval"),
        group="cli",
        setup=_log_huge_sample,
        planted="log.eval whose samples/q1_epoch_1.json declares 4,294,967,280 bytes",
    ),
    Case(
        "an Inspect AI log entry declaring more than 1 GiB (a zip bomb?)",
        args=_import_log("log.eval"),
        group="cli",
        setup=_log_huge_entry,
        planted="log.eval whose summaries.json declares 4,294,967,280 bytes",
    ),
    Case(
        "an Inspect AI log whose entries declare more than 2 GiB together",
        args=_import_log("log.eval"),
        group="cli",
        setup=_log_huge_total,
        planted="log.eval with three entries declaring 1 GiB each",
    ),
    Case(
        "an Inspect AI .eval log larger than 1 GiB",
        args=_import_log("log.eval"),
        group="cli",
        setup=_log_huge_eval,
        planted="log.eval of 1 GiB + 1 byte",
    ),
    Case(
        "an Inspect AI .json log larger than 512 MiB",
        args=_import_log("log.json"),
        group="cli",
        setup=_log_huge_json,
        planted="log.json of 512 MiB + 1 byte",
    ),
    _chat_case(
        "the chat API is out of credit (HTTP 429 insufficient_quota)",
        "quota/v1",
        "answers every request with OpenAI's 429 insufficient_quota",
    ),
    _chat_case(
        "the chat API's reply drips past runner.timeout_s",
        "drip/v1",
        "sends its reply a byte every 0.2 s (runner.timeout_s: 1)",
        CHAT.replace('prompt: "{q}"', 'prompt: "{q}", timeout_s: 1'),
    ),
    _chat_case(
        "the chat API's reply is larger than runner.max_reply_bytes",
        "huge/v1",
        "sends a 20 MiB reply (default cap 8 MiB)",
    ),
    _chat_case(
        "the chat API's usage counts are not numbers",
        "usage/string/v1",
        "reports usage.prompt_tokens: 'abc'",
    ),
    Case("a judge comparator without a model", BASE + "comparator: {kind: judge}\n"),
    Case(
        "a judge prompt without {output}",
        BASE + "comparator: {kind: judge, model: m, prompt: 'Is {reference} right?'}\n",
    ),
    Case(
        "a judge whose API key variable is not set",
        BASE + "comparator: {kind: judge, model: m, api_key_env: COUNTERFACT_NO_SUCH_KEY}\n",
    ),
    _judge_case(
        "a model judge that cannot be reached",
        "http://127.0.0.1:9/v1",
        "is not listening (connection refused)",
        code=1,
    ),
    _judge_case(
        "a model judge that stays down through its retries (HTTP 503)",
        "down/v1",
        "answers every request with HTTP 503",
        reason="judge-unavailable",
    ),
    _judge_case(
        "a model judge slower than its timeout_s",
        "drip/v1",
        "sends its reply a byte every 0.2 s (timeout_s: 0.5)",
        reason="judge-unavailable",
        more=", timeout_s: 0.5",
    ),
    _judge_case(
        "a model judge that refuses the request (HTTP 400)",
        "error/v1",
        "answers with HTTP 400 (a refusal, as a content filter's)",
        reason="judge-unavailable",
    ),
    _judge_case(
        "a model judge whose reply is not a verdict",
        "ok/v1",
        "replies 'Paris, says none' (not SAME or DIFFERENT)",
        reason="judge-unparseable",
    ),
    _judge_case(
        "a model judge whose account is out of credit (HTTP 429 insufficient_quota)",
        "quota/v1",
        "answers every request with OpenAI's 429 insufficient_quota",
        code=1,
    ),
    Case(
        "a judge whose timeout_s is not positive",
        BASE + "comparator: {kind: judge, model: m, timeout_s: 0}\n",
    ),
    Case(
        "a question file that declares a judge (an endpoint and a key to send)",
        BASE + "scenarios: {file: set.jsonl}\n",
        setup=_judge_in_questions,
        planted="set.jsonl: expect {kind: judge, base_url: http://attacker.example/v1}",
    ),
]


def run_case(case: Case, folder: Path) -> tuple[int, str]:
    """Run one case in ``folder``; return the exit code and the error it produced (one line)."""
    folder.mkdir(parents=True, exist_ok=True)
    agent = AGENT.replace("RETURN", case.returns or "None")
    (folder / "agent.py").write_text(agent, encoding="utf-8")
    config = case.config
    if case.returns is not None:
        config = config.replace("agent.py:run", "agent.py:returns")
    if case.setup is not None:
        case.setup(folder)
    root = _ROOTS.get(folder)  # a judge case's server: its address goes in, and out of the text
    if root is not None:
        config = config.replace("http://SERVER/", root)
    cfg = folder / f"sweep{case.suffix}"
    if case.raw is not None:
        cfg.write_bytes(case.raw)
    else:
        cfg.write_text(config, encoding="utf-8")
    args = [a.replace("{cfg}", str(cfg)).replace("{dir}", str(folder)) for a in case.args]
    if case.returns is not None:
        args = ["run", str(cfg), "--out", str(folder / "out")]
    try:
        result = CliRunner().invoke(main, args)
    finally:
        if case.teardown is not None:
            case.teardown(folder)
    if case.returns is not None:
        first = json.loads((folder / "out" / "runs.jsonl").read_text().splitlines()[0])
        error = f"runs.jsonl error: {first['error']['type']}: {first['error']['message']}"
        return result.exit_code, error
    if case.reason is not None:
        rows = [json.loads(x) for x in (folder / "out" / "verdicts.jsonl").read_text().splitlines()]
        found = [d for r in rows for d in r.get("reasons") or [] if d["code"] == case.reason]
        text = f"verdicts.jsonl reason {case.reason}: {found[0]['detail'] if found else '(none)'}"
    else:
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        text = lines[-1] if lines else ""
    return result.exit_code, _plain(text, folder, root)


def _plain(text: str, folder: Path, root: str | None) -> str:
    """``text`` with the case's folder and its server's address in stable words."""
    if root is not None:
        text = text.replace(root, "<server>/")
    return text.replace(str(folder), "<dir>")
