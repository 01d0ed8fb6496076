"""The examples run, as a user runs them, against a real `engram serve`."""

from __future__ import annotations

import os
import subprocess
import sys
import unittest
from pathlib import Path

from .engram_server import EngramServer

HERE = Path(__file__).resolve().parent.parent


class ExampleTest(unittest.TestCase):
    def test_quickstart(self) -> None:
        with EngramServer() as srv:
            env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
            env.update({"ENGRAM_URL": srv.url, "PYTHONPATH": str(HERE)})
            # Twice: the turns' own ids make the second run store nothing new.
            for _ in range(2):
                out = subprocess.run([sys.executable, str(HERE / "examples" / "quickstart.py")],
                                     env=env, capture_output=True, text=True, timeout=300)
                self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        lines = out.stdout.splitlines()
        # The first result of the recall is the turn that names the port.
        first = lines[lines.index(next(l for l in lines if l.startswith("recall ("))) + 1]
        self.assertIn("port 30001", first)
        self.assertIn("Postgres", out.stdout.split("prompt context", 1)[1])
        self.assertIn("refused: code=invalid field=k", out.stdout)
        self.assertIn("3 turns in namespace quickstart", out.stdout)

    def test_readme_snippet(self) -> None:
        # The Python entry of the repository's README, "Use it from your agent", runs as printed.
        readme = (HERE.parent.parent / "README.md").read_text()
        after = readme.split("\n### Python\n", 1)[1]
        code = after.split("```python\n", 1)[1].split("```", 1)[0]
        with EngramServer() as srv:
            env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
            env.update({"ENGRAM_URL": srv.url, "PYTHONPATH": str(HERE)})
            out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertIn("Ana: We decided to keep the billing API on port 30001", out.stdout)


if __name__ == "__main__":
    unittest.main()
