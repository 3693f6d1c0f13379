"""The components hook: `mkdocs serve` rebuilds when the component kit changes."""

from coursekit import ROOT
from coursekit.code import load
from coursekit.components import kit_files

# The hook as MkDocs loads it: by its path.
hook = load(ROOT / "hooks" / "components.py", "components_hook")


class Server:
    def __init__(self):
        self.watched = []

    def watch(self, path):
        self.watched.append(path)


def test_serve_watches_the_component_kit():
    server = Server()
    assert hook.on_serve(server, config=None, builder=None) is server
    assert sorted(server.watched) == sorted(str(path) for path in kit_files())
