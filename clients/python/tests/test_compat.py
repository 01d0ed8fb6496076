"""The package keeps to Python 3.9 and the standard library."""

from __future__ import annotations

import ast
import sys
import unittest
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "engram_client"


class CompatTest(unittest.TestCase):
    def files(self):
        return sorted(PKG.glob("*.py"))

    def test_parses_as_python_3_9(self) -> None:
        for f in self.files():
            with self.subTest(file=f.name):
                ast.parse(f.read_text(), filename=str(f), feature_version=(3, 9))

    def test_annotations_evaluate_on_3_9(self) -> None:
        # get_type_hints evaluates the annotations at run time: X | Y there
        # needs Python 3.10.
        for f in self.files():
            tree = ast.parse(f.read_text())
            for node in ast.walk(tree):
                ann = getattr(node, "annotation", None) or getattr(node, "returns", None)
                if ann is None:
                    continue
                for sub in ast.walk(ann):
                    if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.BitOr):
                        self.fail("%s:%d: X | Y in an annotation" % (f.name, sub.lineno))

    def test_standard_library_only(self) -> None:
        stdlib = getattr(sys, "stdlib_module_names", None)
        if stdlib is None:
            self.skipTest("sys.stdlib_module_names needs Python 3.10")
        for f in self.files():
            for node in ast.walk(ast.parse(f.read_text())):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                for n in names:
                    top = n.split(".")[0]
                    self.assertTrue(top in stdlib or top == "__future__", "%s imports %s" % (f.name, n))


if __name__ == "__main__":
    unittest.main()
