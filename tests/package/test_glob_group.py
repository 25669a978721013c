"""GlobGroup truth table (port of upstream test_glob_group.py), checked on both libraries."""

from __future__ import annotations

import pytest

# (include, exclude, separator, matching names, non-matching names)
TABLE = [
    ("torch.*", (), ".", ["torch.foo", "torch.bar"], ["tor.foo", "torch.foo.bar", "torch"]),
    ("foo.*.bar", (), ".", ["foo.q.bar", "foo.foo.bar"],
     ["foo.bar", "foo.foo", "outer.foo.inner.bar", "foo.q.bar.more", "foo.one.two.bar"]),
    ("fo*.bar", (), ".", ["fo.bar", "foo.bar", "foobar.bar"], ["oij.bar", "f.bar", "foo"]),
    ("foo/a*.htm*", (), "/", ["foo/a.html", "foo/a.htm", "foo/abc.html"], []),
    ("foo/*.txt", (), "/", ["foo/hello.txt", "foo/.txt"],
     ["foo/bar/hello.txt", "bar/foo/hello.txt"]),
    ("torch.**", (), ".", ["torch", "torch.foo", "torch.foo.bar"], ["what.torch", "torchvision"]),
    ("**.torch", (), ".", ["torch", "bar.torch"], ["visiontorch"]),
    ("foo.**.baz", (), ".", ["foo.baz", "foo.bar.baz", "foo.bar1.bar2.baz"],
     ["foobaz", "foo.bar.baz.z"]),
    ("**/bar/**/*.txt", (), "/", ["bar/baz.txt", "a/bar/b.txt", "bar/foo/c.txt"],
     ["baz.txt", "a/b.txt"]),
    ("**", (), ".", ["bar", "foo.bar", "ab.c.d.e"], [""]),
    ("torch.**", ("torch.**.foo",), ".", ["torch", "torch.bar", "torch.barfoo"],
     ["torch.foo", "torch.some.foo"]),
    ("**", ["foo.**", "bar.**"], ".", ["a", "hello", "anything.really"],
     ["foo.bar", "foo.bar.baz"]),
    (["foo", "bar.**"], ["bar.baz", "bar.qux"], ".", ["foo", "bar.other", "bar.bazother"],
     ["bar.baz", "bar.qux"]),
]


@pytest.mark.parametrize("include,exclude,sep,yes,no", TABLE)
def test_truth_table(lib, include, exclude, sep, yes, no):
    group = lib.pkg.GlobGroup(include, exclude=exclude, separator=sep)
    assert [group.matches(n) for n in yes] == [True] * len(yes)
    assert [group.matches(n) for n in no] == [False] * len(no)


def test_double_star_inside_a_segment_is_rejected(lib):
    with pytest.raises(ValueError, match=r"\*\* can only appear as an entire path segment"):
        lib.pkg.GlobGroup("a.**b")


def test_str_shows_the_raw_arguments(lib):
    group = lib.pkg.GlobGroup(["a.*", "b"], exclude="a.c")
    assert str(group) == repr(group) == "GlobGroup(include=['a.*', 'b'], exclude=a.c)"


def test_same_answers_as_torch_on_random_patterns(torch):
    """Random patterns and names over a tiny alphabet: both libraries agree on every pair."""
    import random

    import torch.package as tp

    import hookgrad.package as hp

    rng = random.Random(0)
    segs = ["a", "b", "ab", "*", "a*", "*b", "**"]
    names = [".".join(rng.choice(["a", "b", "ab", "ba", "abb"]) for _ in range(rng.randint(1, 4)))
             for _ in range(60)]
    for _ in range(150):
        pattern = ".".join(rng.choice(segs) for _ in range(rng.randint(1, 4)))
        ours, theirs = hp.GlobGroup(pattern), tp.GlobGroup(pattern)
        assert [ours.matches(n) for n in names] == [theirs.matches(n) for n in names], pattern
