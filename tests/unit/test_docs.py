"""The docs stay in step with the code: every command and flag of the CLI is in docs/CLI.md, in its
command's section, and no section names a flag its command does not have; every relative link in
README.md and docs/*.md points at a file that exists (and at a heading of it, for `#anchor` links).
"""

from __future__ import annotations

import argparse
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
