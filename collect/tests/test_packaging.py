"""The collector as a package (collect/pyproject.toml): its build backend puts the package's
files and metadata in a wheel, the same from the tree and from its source archive, and pip
installs it with no package index into a virtual environment, where
`python3 -m dtperf_collect` runs from any folder.

Run as the collector's other tests: python3 -m unittest discover -s collect/tests
"""

import base64
import hashlib
import importlib.util
import os
import subprocess
import sys
import tarfile
import tempfile
import unittest
import zipfile
from types import ModuleType

COLLECT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def backend(root: str) -> ModuleType:
    """The build backend of the tree at `root`, loaded from its file."""
    spec = importlib.util.spec_from_file_location("dtperf_collect_build",
                                                  os.path.join(root, "backend", "dtperf_collect_build.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


class PackagingTest(unittest.TestCase):
    def test_the_wheel_holds_the_package_and_its_metadata(self):
        with tempfile.TemporaryDirectory() as out:
            name = backend(COLLECT).build_wheel(out)
            self.assertEqual(name, "dtperf_collect-0.1.0-py3-none-any.whl")
            with zipfile.ZipFile(os.path.join(out, name)) as wheel:
                names = set(wheel.namelist())
                package = {f"dtperf_collect/{f}" for f in os.listdir(os.path.join(COLLECT, "dtperf_collect"))
                           if f.endswith(".py") or f == "py.typed"}
                info = "dtperf_collect-0.1.0.dist-info"
                self.assertEqual(names, package | {f"{info}/METADATA", f"{info}/WHEEL", f"{info}/RECORD"})
                self.assertIn("dtperf_collect/py.typed", names)  # the annotations are for users too
                metadata = wheel.read(f"{info}/METADATA").decode().splitlines()
                self.assertIn("Name: dtperf-collect", metadata)
                self.assertIn("Requires-Dist: torch", metadata)
                # RECORD: every other file with its size and SHA-256, as installers check.
                for line in wheel.read(f"{info}/RECORD").decode().splitlines():
                    path, digest, size = line.split(",")
                    if path == f"{info}/RECORD":
                        self.assertEqual((digest, size), ("", ""))
                        continue
                    data = wheel.read(path)
                    expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                    self.assertEqual((digest, int(size)), (f"sha256={expected}", len(data)), path)

    def test_the_source_archive_builds_the_same_wheel(self):
        with tempfile.TemporaryDirectory() as out:
            tree = os.path.join(out, "tree")
            os.mkdir(tree)
            sdist = backend(COLLECT).build_sdist(out)
            with tarfile.open(os.path.join(out, sdist)) as archive:
                archive.extractall(tree)
            unpacked = os.path.join(tree, "dtperf_collect-0.1.0")
            self.assertTrue(os.path.isfile(os.path.join(unpacked, "PKG-INFO")))
            os.mkdir(os.path.join(out, "a"))
            os.mkdir(os.path.join(out, "b"))
            from_tree = backend(COLLECT).build_wheel(os.path.join(out, "a"))
            from_sdist = backend(unpacked).build_wheel(os.path.join(out, "b"))
            # Byte for byte: the archive misses nothing, and the build does not depend on when.
            self.assertEqual(read(os.path.join(out, "a", from_tree)), read(os.path.join(out, "b", from_sdist)))

    @unittest.skipIf(sys.version_info < (3, 11), "before Python 3.11 the build needs tomli from an index")
    def test_pip_installs_it_without_an_index(self):
        with tempfile.TemporaryDirectory() as work:
            venv = os.path.join(work, "venv")
            # Beside the system's packages: Debian's python3-torch satisfies the dependency.
            made = subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", venv],
                                  capture_output=True, text=True)
            if made.returncode != 0:
                self.skipTest(f"no virtual environment with pip here (Debian: python3-venv): {made.stderr.strip()}")
            python = os.path.join(venv, "bin", "python")
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
            out = subprocess.run([python, "-m", "pip", "install", COLLECT], capture_output=True, text=True, env=env,
                                 cwd=work)
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
            where = subprocess.run([python, "-c", "import dtperf_collect; print(dtperf_collect.__file__)"],
                                   capture_output=True, text=True, env=env, cwd=work)
            self.assertEqual(where.returncode, 0, where.stderr)
            self.assertTrue(where.stdout.startswith(venv), where.stdout)
            cli = subprocess.run([python, "-m", "dtperf_collect", "--help"], capture_output=True, text=True, env=env,
                                 cwd=work)
            self.assertEqual(cli.returncode, 0, cli.stderr)
            self.assertIn("--model", cli.stdout)


if __name__ == "__main__":
    unittest.main()
