"""`Directory`: the tree of archive members returned by ``PackageImporter.file_structure()``."""

from __future__ import annotations

from hookgrad.package._glob import GlobGroup, GlobPattern

_SPACE = "    "
_BRANCH = "\u2502   "
_TEE = "\u251c\u2500\u2500 "
_LAST = "\u2514\u2500\u2500 "
_ROOT = "\u2500\u2500\u2500 "


class Directory:
    """A folder (or file) of an archive; ``str()`` draws the tree, folders first.

    Mirrors: ``torch.package.Directory``.
    """

    def __init__(self, name: str, is_dir: bool) -> None:
        self.name = name
        self.is_dir = is_dir
        self.children: dict[str, Directory] = {}

    def _get_dir(self, dirs: list[str]) -> Directory:
        node = self
        for d in dirs:
            node = node.children.setdefault(d, Directory(d, True))
        return node

    def _add_file(self, file_path: str) -> None:
        *dirs, file = file_path.split("/")
        self._get_dir(dirs).children[file] = Directory(file, False)

    def has_file(self, filename: str) -> bool:
        """Whether `filename` (a ``/`` path, file or folder) is in this tree."""
        child, _, rest = filename.partition("/")
        if child not in self.children:
            return False
        return True if not rest else self.children[child].has_file(rest)

    def __str__(self) -> str:
        out: list[str] = []
        self._stringify(out, "", _ROOT)
        return "".join(out)

    def _stringify(self, out: list[str], preamble: str, pointer: str) -> None:
        out.append(f"{preamble}{pointer}{self.name}\n")
        preamble += _BRANCH if pointer == _TEE else _SPACE
        dirs = sorted(k for k, v in self.children.items() if v.is_dir)
        files = sorted(k for k, v in self.children.items() if not v.is_dir)
        for i, key in enumerate(dirs):
            last = i == len(dirs) - 1 and not files
            self.children[key]._stringify(out, preamble, _LAST if last else _TEE)
        for i, key in enumerate(files):
            out.append(f"{preamble}{_LAST if i == len(files) - 1 else _TEE}{key}\n")


def directory_from_file_list(filename: str, file_list: list[str], include: GlobPattern = "**",
                             exclude: GlobPattern = ()) -> Directory:
    """A `Directory` named `filename` of the members that match the ``/`` patterns."""
    pattern = GlobGroup(include, exclude=exclude, separator="/")
    top = Directory(filename, True)
    for file in file_list:
        if pattern.matches(file):
            top._add_file(file)
    return top
