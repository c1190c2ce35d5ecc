"""The docs stay in step with the code: every command and flag of the CLI is in docs/CLI.md, in its
command's section, and no section names a flag its command does not have; every relative link in
README.md and docs/*.md points at a file that exists (and at a heading of it, for `#anchor` links).
"""

from __future__ import annotations

import argparse
import ast
import re
from dataclasses import dataclass
from pathlib import Path

from console.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
CLI_DOC = ROOT / "docs" / "CLI.md"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
_FENCE = re.compile(r"^```")
_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
# [text](target) and ![alt](target), the text possibly over several lines; reference definitions
_INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE_LINK = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Command:
    path: tuple[str, ...]  # ("pipeline", "history")
    flags: frozenset[str]  # every long option string, --help left out

    @property
    def name(self) -> str:
        return " ".join(self.path)


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[Command]:
    """Every command of the parser, sub-commands recursively, with its long options."""
    found = []
    if path:
        flags = {s for a in parser._actions for s in a.option_strings if s.startswith("--") and s != "--help"}
        found.append(Command(path, frozenset(flags)))
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.extend(commands(sub, (*path, name)))
    return found


def sections(text: str) -> dict[str, str]:
    """Heading text → the section under it (up to the next heading of the same or a higher level;
    headings inside code blocks do not count)."""
    lines = text.splitlines()
    heads: list[tuple[int, int, str]] = []  # line, level, title
    fenced = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        m = _HEADING.match(line)
        if m and not fenced:
            heads.append((i, len(m.group(1)), m.group(2)))
    out = {}
    for n, (start, level, title) in enumerate(heads):
        end = next((i for i, lv, _ in heads[n + 1 :] if lv <= level), len(lines))
        out[title] = "\n".join(lines[start + 1 : end])
    return out


def synopsis(section: str) -> str:
    """The first code block of a section: the command's usage."""
    m = re.search(r"^```[^\n]*\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    return m.group(1) if m else ""


def slug(title: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return text.replace(" ", "-")


def anchors(doc: Path) -> set[str]:
    return {slug(title) for title in sections(doc.read_text(encoding="utf-8"))}


def test_the_walk_sees_every_command() -> None:
    names = {c.name for c in commands(build_parser())}
    assert {"list", "submit", "pipeline history", "pipeline compact", "sandbox up", "sandbox down"} <= names
    submit = next(c for c in commands(build_parser()) if c.name == "submit")
    assert {"--bootstrap-server", "--reassignment-json-file", "--no-elect-leaders"} <= submit.flags


def test_every_command_has_a_section_naming_each_of_its_flags() -> None:
    docs = sections(CLI_DOC.read_text(encoding="utf-8"))
    missing_sections, missing_flags = [], []
    for command in commands(build_parser()):
        section = docs.get(f"`{command.name}`")
        if section is None:
            missing_sections.append(command.name)
            continue
        named = set(_FLAG.findall(section))
        missing_flags += [f"{command.name} {flag}" for flag in sorted(command.flags - named)]
    assert not missing_sections, f"docs/CLI.md has no heading `COMMAND` for: {missing_sections}"
    assert not missing_flags, f"flags missing from their command's section of docs/CLI.md: {missing_flags}"


def test_no_synopsis_names_a_flag_its_command_lacks() -> None:
    docs = sections(CLI_DOC.read_text(encoding="utf-8"))
    stale = []
    for command in commands(build_parser()):
        usage = synopsis(docs.get(f"`{command.name}`", ""))
        stale += [f"{command.name} {flag}" for flag in sorted(set(_FLAG.findall(usage)) - command.flags)]
    assert not stale, f"docs/CLI.md shows flags the command does not have: {stale}"


def links(text: str) -> list[str]:
    """Every link target outside code (inline, image and reference links)."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    prose = re.sub(r"`[^`\n]*`", "", prose)
    return _INLINE_LINK.findall(prose) + _REFERENCE_LINK.findall(prose)


def test_relative_links_point_at_files_and_headings_that_exist() -> None:
    broken = []
    for doc in DOCS:
        for target in links(doc.read_text(encoding="utf-8")):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):  # http:, https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            file = (doc.parent / path).resolve() if path else doc
            where = f"{doc.relative_to(ROOT)}: {target}"
            if not file.exists():
                broken.append(f"{where} (no such file)")
            elif anchor and file.suffix == ".md" and anchor not in anchors(file):
                broken.append(f"{where} (no such heading)")
    assert not broken, "broken links:\n  " + "\n  ".join(broken)


def test_the_link_check_finds_links() -> None:
    text = "See [the guide](docs/GUIDE.md#users-and-roles) and\n![a picture\nover lines](docs/live.png).\n"
    text += "`[not](a-link.md)`\n```\n[nor](this.md)\n```\n[ref]: docs/CLI.md\n"
    assert links(text) == ["docs/GUIDE.md#users-and-roles", "docs/live.png", "docs/CLI.md"]
    assert slug("`pipeline history`") == "pipeline-history"
    assert slug("History and the data pipeline") == "history-and-the-data-pipeline"


def test_the_readme_names_every_command() -> None:
    section = sections((ROOT / "README.md").read_text(encoding="utf-8"))["Command line"]
    tops = {c.name.split()[0] for c in commands(build_parser())}
    missing = sorted(name for name in tops if f"`{name}`" not in section)
    assert not missing, f"README's Command line paragraph does not name: {missing}"


def test_every_error_is_listed_with_its_exit_code() -> None:
    """docs/CLI.md's table of errors names each error of console/core/errors.py with the exit code
    :func:`console.cli.exits.exit_for` gives it (and the exit code table has that code)."""
    from console.cli.exits import exit_for
    from console.core import errors

    text = CLI_DOC.read_text(encoding="utf-8")
    listed: dict[str, str] = {}
    for row in re.findall(r"^\| (`[A-Z][^|]*`) \| [^|]* \| (\d+) \|$", text, re.MULTILINE):
        for name in re.findall(r"`(\w+)`", row[0]):
            listed[name] = row[1]
    classes = [
        c
        for c in vars(errors).values()
        if isinstance(c, type) and issubclass(c, errors.ConsoleError) and c.__module__ == errors.__name__
    ]
    assert {"RunOverlap", "StoreWriteClash", "JobAlreadyRunning"} <= {c.__name__ for c in classes}
    wrong = sorted(
        f"{c.__name__}: listed {listed.get(c.__name__)}, exits {int(exit_for(c.__new__(c)))}"
        for c in classes
        if c is not errors.ConsoleError and listed.get(c.__name__) != str(int(exit_for(c.__new__(c))))
    )
    assert not wrong, f"docs/CLI.md's errors table is not the code's: {wrong}"
    codes = set(re.findall(r"^\| (\d+) \| ", text, re.MULTILINE))
    assert set(listed.values()) <= codes, "an error's exit code is missing from the exit codes table"


ARCHITECTURE = ROOT / "docs" / "ARCHITECTURE.md"


def module_table() -> tuple[set[Path], set[Path]]:
    """docs/ARCHITECTURE.md's module table ("The packages"): the files it names and the directories
    it names as a whole. A package's bold row (``| **`core/`** |``) sets where the rows under it are
    (``console/core/``; ``components/``, ``views/``, ``app.py`` and ``serve.py`` at the root); in a
    row's first cell a name with a directory (``kafka/reads.py``) sets it for the names after it."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    table = text[text.index("## The packages") : text.index("## The read path")]
    files: set[Path] = set()
    dirs: set[Path] = set()
    base = ROOT / "console"
    for line in table.splitlines():
        if not line.startswith("| ") or line.startswith("| ---") or line.startswith("| module"):
            continue
        first = line.split(" | ")[0][2:]
        heading = re.fullmatch(r"\*\*(.*)\*\*", first)
        names = re.findall(r"`([^`]+)`", first)
        if heading:
            top = names[0]
            if top == "console/":
                base = ROOT / "console"
                files.update(base / n for n in re.findall(r"`(__\w+__\.py)`", line))
                continue
            base = ROOT if top in ("components/", "views/", "serve.py") else ROOT / "console" / top
            if top == "components/":
                base = ROOT / "components"
            for n in names:
                if n.endswith(".py") and top in ("views/", "serve.py"):
                    files.add(ROOT / n)
                elif top == "views/" and n == "views/":
                    dirs.add(ROOT / "views")
            continue
        prefix = ""
        for n in names:
            if "/" in n.rstrip("/"):
                prefix = n.rstrip("/").rsplit("/", 1)[0] + "/"
                path = base / n
            else:
                path = base / (prefix + n)
            (dirs if n.endswith("/") else files).add(path)
    return files, dirs


def test_the_module_table_names_every_module_and_only_those() -> None:
    files, dirs = module_table()
    on_disk = {ROOT / "app.py", ROOT / "serve.py", ROOT / "console" / "__init__.py"}
    for top in ("console", "components", "views"):
        on_disk |= {p for p in (ROOT / top).rglob("*.py") if p.name != "__init__.py" and "__pycache__" not in p.parts}
    missing = sorted(
        p.relative_to(ROOT).as_posix() for p in on_disk if p not in files and not any(d in p.parents for d in dirs)
    )
    stale = sorted(p.relative_to(ROOT).as_posix() for p in files | dirs if not p.exists())
    assert not missing, f"docs/ARCHITECTURE.md's module table does not name: {missing}"
    assert not stale, f"docs/ARCHITECTURE.md's module table names what is not there: {stale}"


def test_the_diagram_names_every_package() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    diagram = re.search(r"^```\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    assert diagram is not None
    packages = sorted(p.name for p in (ROOT / "console").iterdir() if (p / "__init__.py").exists())
    missing = [p for p in packages if not re.search(rf"(?<!\w){p}/", diagram.group(1))]
    assert not missing, f"docs/ARCHITECTURE.md's diagram does not show: {missing}"


def test_the_size_limits_are_stated_where_the_size_test_points() -> None:
    """tests/unit/test_sizes.py points at docs/ARCHITECTURE.md's "Size limits", which states its limits."""
    sizes = ROOT / "tests" / "unit" / "test_sizes.py"
    tree = ast.parse(sizes.read_text(encoding="utf-8"))
    assert 'docs/ARCHITECTURE.md, "Size limits"' in " ".join((ast.get_docstring(tree) or "").split())
    limits = next(
        ast.literal_eval(n.value)
        for n in tree.body
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "LIMITS" for t in n.targets)
    )
    section = sections(ARCHITECTURE.read_text(encoding="utf-8"))["Size limits"]
    words = {"function": "a function or method", "class": "a class", "module": "a module"}
    missing = [kind for kind, n in limits.items() if f"| {words[kind]} | {n} lines |" not in section]
    assert not missing, f"docs/ARCHITECTURE.md's Size limits do not state the test's limits for: {missing}"


def test_the_readme_is_a_front_door() -> None:
    """README.md: at most 120 lines, the two setup commands, and a layout naming every package."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 120, "README.md is over 120 lines: move the detail to docs/"
    assert "make demo" in text and "make test" in text
    layout = sections(text)["Layout"]
    packages = sorted(p.name for p in (ROOT / "console").iterdir() if (p / "__init__.py").exists())
    missing = [p for p in packages if f"{p}/" not in layout]
    assert not missing, f"README's Layout does not name: {missing}"
