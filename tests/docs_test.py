"""The documentation's commands, run as a user runs them, against the output it prints.

    python3 tests/docs_test.py --dtperf PATH --root REPO_ROOT [--calibrate PATH]
                               [--update] [--timeout SECONDS] [FILES...]

FILES (absolute, or relative to REPO_ROOT) default to README.md and docs/*.md.

- Only fenced blocks whose info string is `console` (```console) run; ```sh, ```json and
  plain ``` blocks never do (an info string that starts with "console" but says more is an
  error, not a skipped block). A console block may be indented (in a list): its indentation
  is removed from its lines.
- In a console block a line starting with "$ " is a command; a command line ending with a
  backslash continues on the next line. The lines after a command, up to the next "$ "
  line or the block's end, are its expected output. Text before a block's first command
  is an error.
- Each command runs as `bash -o pipefail -c COMMAND` (a failure anywhere in a pipeline
  counts; `| head` is fine: SIGPIPE is not a failure), stdin empty, with PATH starting with
  the directories of dtperf (and of dtperf-calibrate, with --calibrate) and LC_ALL=C;
  nothing else in the environment changes.
- Only stdout is compared (a command shows stderr with 2>&1). A non-zero exit status fails,
  except where the command shows its stderr (2>&1: an example of an error, which exits 2);
  status 127 (command not found), death by a signal other than SIGPIPE (bash's status
  128+N counts as signal N) and running past --timeout always fail.
- Each documentation file runs, block after block, in its own temporary directory holding
  a symlink to every top-level entry of REPO_ROOT but .git and build*: repository paths
  resolve, files a command writes stay there (later commands of the file can read them).
- Comparison is exact after trailing whitespace is removed from each line and trailing
  empty lines from both sides. A mismatch prints the file, the command's line, the
  command and a diff; the other commands still run. The test fails if any command fails
  or mismatches, if a file is missing, or if no file holds a console command at all.
- --update writes each command's actual output into the files in place of the expected
  output (blank lines after it and everything else kept byte for byte).
"""
import argparse
import difflib
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

PROMPT = "$ "
DIFF_LINES = 40


class DocError(Exception):
    """A console block that does not follow the convention."""


@dataclass
class Command:
    line: int  # 1-based line of the "$ " line in the file
    text: str  # as bash reads it, continuation lines included
    expected: List[str]  # the expected output, without the block's indentation
    start: int  # 0-based index of the first expected-output line in the file
    end: int  # index past the last non-blank expected-output line (blank lines after stay)
    indent: int  # the block's indentation, put back on rewritten lines


def console_blocks(lines: List[str]) -> Iterator[Tuple[int, int, int]]:
    """(indentation, first content line, index of the closing fence) of each console block."""
    i = 0
    while i < len(lines):
        opening = re.match(r"( *)(`{3,})(.*)$", lines[i].rstrip())
        if not opening:
            i += 1
            continue
        closing = re.compile(r" *`{%d,}\s*$" % len(opening.group(2)))
        end = i + 1
        while end < len(lines) and not closing.match(lines[end]):
            end += 1
        info = opening.group(3).strip()
        if info == "console":
            yield len(opening.group(1)), i + 1, end
        elif info.startswith("console"):
            raise DocError(f"line {i + 1}: info string '{info}': a runnable block says exactly 'console'")
        i = end + 1


def parse(text: str) -> List[Command]:
    """The commands of a markdown text's console blocks, in order."""
    lines = text.split("\n")
    commands: List[Command] = []
    for indent, first, end in console_blocks(lines):

        def body(k: int) -> str:
            line = lines[k]
            return line[min(indent, len(line) - len(line.lstrip(" "))):]

        k = first
        while k < end and not body(k).startswith(PROMPT):
            if body(k).strip():
                raise DocError(f"line {k + 1}: text in a console block before its first '$ ' command")
            k += 1
        while k < end:
            line_number = k + 1
            parts = [body(k)[len(PROMPT):].rstrip()]
            while parts[-1].endswith("\\") and k + 1 < end:
                k += 1
                parts.append(body(k).rstrip())
            k += 1
            start = k
            while k < end and not body(k).startswith(PROMPT):
                k += 1
            expected = [body(j) for j in range(start, k)]
            shown = len(normalised(expected))
            commands.append(Command(line_number, "\n".join(parts), expected, start, start + shown, indent))
    return commands


def normalised(lines: List[str]) -> List[str]:
    """Lines without trailing whitespace, and without trailing empty lines."""
    result = [line.rstrip() for line in lines]
    while result and not result[-1]:
        result.pop()
    return result


def rewrite(text: str, commands: List[Command], outputs: Dict[int, List[str]]) -> str:
    """The text with the expected output of commands[i] replaced by outputs[i]."""
    lines = text.split("\n")
    for i in sorted(outputs, reverse=True):
        c = commands[i]
        cr = "\r" if lines[c.start - 1].endswith("\r") else ""  # the command line's line end
        lines[c.start:c.end] = [(" " * c.indent + line if line else "") + cr for line in normalised(outputs[i])]
    return "\n".join(lines)


@dataclass
class Result:
    stdout: List[str]
    stderr: str
    error: Optional[str]  # why the command failed outright, None when it ran


def run(command: str, cwd: str, env: Dict[str, str], timeout: float) -> Result:
    process = subprocess.Popen(["bash", "-o", "pipefail", "-c", command], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    error: Optional[str] = None
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)  # the whole pipeline, not bash alone
        except ProcessLookupError:
            pass
        out, err = process.communicate()
        error = f"timed out after {timeout:g} s"
    status = process.returncode
    # bash reports a pipeline's last command killed by signal N as status 128+N.
    signal_number = -status if status < 0 else status - 128 if 128 < status <= 128 + 64 else 0
    if error is None and status == 127:
        error = "exit status 127 (command not found)"
    elif error is None and signal_number and signal_number != signal.SIGPIPE:
        try:
            name = signal.Signals(signal_number).name
        except ValueError:
            name = f"signal {signal_number}"
        error = f"killed by {name} (status {status})"
    elif error is None and status != 0 and not signal_number and "2>&1" not in command:
        error = f"exit status {status} (an example of an error shows its stderr with 2>&1)"
    return Result(out.decode("utf-8", "replace").split("\n"), err.decode("utf-8", "replace"), error)


def scratch_directory(root: Path) -> str:
    """A temporary directory with a symlink to each top-level entry of the repository."""
    directory = tempfile.mkdtemp(prefix="dtperf-docs-")
    for entry in sorted(root.iterdir()):
        if entry.name != ".git" and not entry.name.startswith("build"):
            os.symlink(entry, os.path.join(directory, entry.name))
    return directory


def write_atomically(path: Path, text: str) -> None:
    target = path.resolve()
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        os.chmod(temporary, stat.S_IMODE(target.stat().st_mode))
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise


def check_file(path: Path, name: str, root: Path, env: Dict[str, str], timeout: float,
               update: bool) -> Tuple[int, int, int]:
    """(commands, commands matched or rewritten, failures) of one documentation file."""
    text = path.read_bytes().decode("utf-8")  # line ends as they are: --update keeps them
    try:
        commands = parse(text)
    except DocError as e:
        print(f"FAIL {name}: {e}")
        return 0, 0, 1
    matched = failures = 0
    outputs: Dict[int, List[str]] = {}
    directory = scratch_directory(root)
    try:
        for i, c in enumerate(commands):
            result = run(c.text, directory, env, timeout)
            actual, expected = normalised(result.stdout), normalised(c.expected)
            problem = result.error
            differs = problem is None and actual != expected
            if differs and update:
                if any(line.startswith(PROMPT) or line.lstrip().startswith("```") for line in actual):
                    problem = "its output has a line starting with '$ ' or '```', which a console block cannot show"
                else:
                    outputs[i] = actual
                    continue
            if problem is None and not differs:
                matched += 1
                continue
            failures += 1
            print(f"FAIL {name}:{c.line}: {problem or 'output differs'}")
            print("  $ " + c.text.replace("\n", "\n    "))
            if problem is None:
                diff = list(difflib.unified_diff(expected, actual, "expected (docs)", "actual", lineterm="", n=2))
                print("\n".join(diff[:DIFF_LINES]))
                if len(diff) > DIFF_LINES:
                    print(f"... ({len(diff) - DIFF_LINES} more diff lines)")
            if result.stderr.strip():
                print("  stderr: " + "\n  ".join(result.stderr.rstrip().split("\n")[-10:]))
    finally:
        shutil.rmtree(directory)
    if outputs:
        write_atomically(path, rewrite(text, commands, outputs))
        print(f"{name}: {len(outputs)} outputs changed")
    return len(commands), len(outputs) if update else matched, failures


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="Run the commands of the docs' console blocks.")
    parser.add_argument("--dtperf", required=True, type=Path, help="the dtperf binary to run")
    parser.add_argument("--root", required=True, type=Path, help="the repository root")
    parser.add_argument("--calibrate", type=Path, help="the dtperf-calibrate binary")
    parser.add_argument("--update", action="store_true", help="write the actual outputs into the files")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per command (default 120)")
    parser.add_argument("files", nargs="*", type=Path, help="markdown files (default README.md, docs/*.md)")
    args = parser.parse_args(argv)
    root: Path = args.root.resolve()
    files: List[Path] = args.files or [Path("README.md")] + sorted((root / "docs").glob("*.md"))
    paths = [file if file.is_absolute() else root / file for file in files]
    missing = [str(p) for p in paths if not p.is_file()]
    binaries = [b for b in (args.dtperf, args.calibrate) if b is not None]
    missing += [f"{b} (not executable)" for b in binaries if not os.access(b, os.X_OK)]
    if missing:
        print("FAIL: missing: " + ", ".join(missing))
        return 1

    env = dict(os.environ, LC_ALL="C")
    directories = [str(b.absolute().parent) for b in binaries]
    env["PATH"] = os.pathsep.join(directories + ([env["PATH"]] if env.get("PATH") else []))
    commands = good = failures = 0
    for path in paths:
        name = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
        counts = check_file(path, name, root, env, args.timeout, args.update)
        commands, good, failures = commands + counts[0], good + counts[1], failures + counts[2]
    print(f"{commands} commands in {len(paths)} files: {good} {'updated' if args.update else 'matched'}")
    if commands == 0:
        print("FAIL: no console block with a '$ ' command in any file: nothing was checked")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
