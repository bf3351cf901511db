"""docs_test.py's own checks: its reading of console blocks, the rewrite of --update, and
runs of small markdown files with plain shell commands (no dtperf needed).

    python3 tests/docs_test_selftest.py
"""
import contextlib
import io
import os
import sys
import tempfile
import unittest
from pathlib import Path
from typing import List, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import docs_test  # noqa: E402

MARKDOWN = """# Title

```sh
$ not-run --ever
```

```console
$ dtperf predict \\
    --model gpt2 \\
    --gpus 8
iteration 154.81 ms
  compute 100 ms   \n\
$ dtperf list | head -1
gpt2

```

Text between blocks.

1. In a list:

   ```console
   $ echo one
   one
   ```
```
$ plain block, not run
```
"""


class ParseTest(unittest.TestCase):
    def test_commands_continuations_and_outputs(self) -> None:
        commands = docs_test.parse(MARKDOWN)
        self.assertEqual([c.line for c in commands], [8, 13, 23])
        self.assertEqual(commands[0].text, "dtperf predict \\\n    --model gpt2 \\\n    --gpus 8")
        self.assertEqual(commands[0].expected, ["iteration 154.81 ms", "  compute 100 ms   "])
        self.assertEqual(commands[1].text, "dtperf list | head -1")
        self.assertEqual(docs_test.normalised(commands[1].expected), ["gpt2"])
        self.assertEqual(commands[2].text, "echo one")
        self.assertEqual(commands[2].expected, ["one"])

    def test_other_blocks_are_not_run(self) -> None:
        self.assertEqual(docs_test.parse("```sh\n$ a\n```\n```\n$ b\n```\n```json\n{}\n```\n"), [])

    def test_a_console_block_with_more_in_its_info_string_is_refused(self) -> None:
        with self.assertRaises(docs_test.DocError):
            docs_test.parse("```console title\n$ echo\n```\n")

    def test_text_before_the_first_command_is_refused(self) -> None:
        with self.assertRaises(docs_test.DocError):
            docs_test.parse("```console\noutput without a command\n$ echo\n```\n")

    def test_comparison_ignores_trailing_whitespace_and_empty_lines(self) -> None:
        self.assertEqual(docs_test.normalised(["a  ", "", "b\t", "", " "]), ["a", "", "b"])


class RewriteTest(unittest.TestCase):
    def test_keeps_everything_else_byte_for_byte(self) -> None:
        commands = docs_test.parse(MARKDOWN)
        new = docs_test.rewrite(MARKDOWN, commands, {1: ["gpt2", "resnet50", ""], 2: ["two", "", "three"]})
        expected = (MARKDOWN.replace("gpt2\n\n```", "gpt2\nresnet50\n\n```")
                    .replace("   one\n", "   two\n\n   three\n"))
        self.assertEqual(new, expected)
        self.assertEqual(docs_test.rewrite(MARKDOWN, commands, {}), MARKDOWN)

    def test_output_added_where_there_was_none(self) -> None:
        text = "```console\n$ a\n$ b\n\n```\n"
        new = docs_test.rewrite(text, docs_test.parse(text), {0: ["x"], 1: ["y"]})
        self.assertEqual(new, "```console\n$ a\nx\n$ b\ny\n\n```\n")

    def test_crlf_line_ends_kept(self) -> None:
        text = "intro\r\n```console\r\n$ a\r\nold\r\n```\r\n"
        new = docs_test.rewrite(text, docs_test.parse(text), {0: ["new"]})
        self.assertEqual(new, "intro\r\n```console\r\n$ a\r\nnew\r\n```\r\n")


class RunTest(unittest.TestCase):
    """main() on a scratch repository whose 'dtperf' is a shell script."""

    def setUp(self) -> None:
        scratch = tempfile.TemporaryDirectory()
        self.addCleanup(scratch.cleanup)
        self.root = Path(scratch.name)
        (self.root / "data.txt").write_text("repository file\n")
        (self.root / "bin").mkdir()
        self.dtperf = self.root / "bin" / "dtperf"
        self.dtperf.write_text('#!/bin/sh\necho "dtperf $*"\n')
        self.dtperf.chmod(0o755)

    def main(self, markdown: str, *options: str) -> Tuple[int, str, Path]:
        doc = self.root / "doc.md"
        doc.write_text(markdown)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = docs_test.main(["--dtperf", str(self.dtperf), "--root", str(self.root), *options, "doc.md"])
        return status, out.getvalue(), doc

    def test_commands_run_in_one_scratch_directory_per_file(self) -> None:
        status, out, _ = self.main(
            "```console\n$ dtperf predict \\\n  -o x.json\ndtperf predict -o x.json\n"
            "$ cat data.txt; echo made > made.txt\nrepository file\n```\n"
            "```console\n$ cat made.txt; echo $LC_ALL; yes | head -1\nmade\nC\ny\n$ echo piped; kill -PIPE $$\npiped\n```\n")
        self.assertEqual(status, 0, out)
        self.assertIn("4 commands in 1 files: 4 matched", out)
        self.assertFalse((self.root / "made.txt").exists())

    def test_mismatch_and_failures_are_reported_and_fail(self) -> None:
        status, out, _ = self.main("```console\n$ echo actual\nexpected\n$ no-such-command\n"
                                   "$ kill -SEGV $$\n$ sleep 5\n$ echo fine\nfine\n```\n", "--timeout", "0.5")
        self.assertEqual(status, 1)
        for message in ["doc.md:2: output differs", "-expected", "+actual", "doc.md:4: exit status 127",
                        "doc.md:5: killed by SIGSEGV", "doc.md:6: timed out after 0.5 s",
                        "5 commands in 1 files: 1 matched"]:
            self.assertIn(message, out)

    def test_a_failing_command_fails_unless_it_shows_its_error(self) -> None:
        # pipefail: the failure of the first command of a pipeline counts too.
        status, out, _ = self.main("```console\n$ false | cat\n$ sh -c 'echo oops >&2; exit 2' 2>&1\noops\n```\n")
        self.assertEqual(status, 1)
        self.assertIn("doc.md:2: exit status 1", out)
        self.assertIn("2 commands in 1 files: 1 matched", out)

    def test_update_writes_the_actual_output(self) -> None:
        status, out, doc = self.main("Intro\n```console\n$ echo new\nold\n\n$ echo same\nsame\n```\nEnd\n", "--update")
        self.assertEqual(status, 0, out)
        self.assertEqual(doc.read_text(), "Intro\n```console\n$ echo new\nnew\n\n$ echo same\nsame\n```\nEnd\n")
        self.assertIn("2 commands in 1 files: 1 updated", out)

    def test_nothing_to_check_or_missing_file_fails(self) -> None:
        status, out, _ = self.main("```sh\n$ echo\n```\n")
        self.assertEqual(status, 1)
        self.assertIn("nothing was checked", out)
        files: List[str] = ["--dtperf", str(self.dtperf), "--root", str(self.root), "absent.md"]
        with contextlib.redirect_stdout(io.StringIO()) as out2:
            self.assertEqual(docs_test.main(files), 1)
        self.assertIn("absent.md", out2.getvalue())


if __name__ == "__main__":
    unittest.main()
