"""tvm_conformance.pep440 reads versions and specifiers as `packaging` does (issue 43, point 3).

The reader is standard library only (the verdict reads the deviation registry with any python3);
these tests hold it to `packaging` from the venv over a generated list of versions and specs,
pre-releases admitted as the registry admits them.
"""

import itertools

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version as PackagingVersion

from tvm_conformance import pep440

RELEASES = (
    "0.1",
    "0.1.13",
    "0.1.14",
    "0.1.14.0",
    "0.1.15",
    "0.26",
    "0.27",
    "0.27.0",
    "0.28",
    "1!0.1",
)
PRES = ("", "a1", "b2", "rc1", "rc2")
POSTS = ("", ".post0", ".post2")
DEVS = ("", ".dev0", ".dev123")
LOCALS = ("", "+g1a2b3c4", "+cu130.1", "+1.abc")


def _versions() -> list[str]:
    """Every combination of release, pre, post, dev and local part above (1,800 versions)."""
    return ["".join(parts) for parts in itertools.product(RELEASES, PRES, POSTS, DEVS, LOCALS)]


BOUNDS = ("0.1.13", "0.1.14", "0.1.14rc1", "0.1.14.post2", "0.1.14.dev0", "0.28", "0.28.dev0")
OPERATORS = ("<", "<=", ">", ">=", "==", "!=")


def _specs() -> list[str]:
    specs = [op + bound for op, bound in itertools.product(OPERATORS, BOUNDS)]
    specs += ["~=0.1.14", "~=0.27", "~=0.1", "==0.28.*", "!=0.1.*", "==0.1.14.*", "==1!0.*"]
    specs += ["==0.1.14+g1a2b3c4", "!=0.1.14+g1a2b3c4", ">=0.1.13,<0.1.15", "<0.27,>=0.26", ""]
    return specs


VERSIONS = _versions()


@pytest.mark.parametrize("spec", _specs())
def test_specifier_agrees_with_packaging_over_generated_versions(spec: str) -> None:
    ours = pep440.Specifier.parse(spec)
    theirs = SpecifierSet(spec)
    differ = [
        v
        for v in VERSIONS
        if ours.contains(pep440.Version.parse(v)) != theirs.contains(v, prereleases=True)
    ]
    assert not differ, f"{spec!r}: {len(differ)} versions read differently, first {differ[:5]}"
    # Not vacuous: the spec holds for some generated versions and not for others (but "").
    held = sum(ours.contains(v) for v in VERSIONS)
    assert 0 < held <= len(VERSIONS) and (held < len(VERSIONS) or spec == "")


def test_order_and_equality_agree_with_packaging() -> None:
    ours = sorted(VERSIONS, key=pep440.Version.parse)
    theirs = sorted(VERSIONS, key=PackagingVersion)
    # Equal versions (0.1.14 and 0.1.14.0) keep the generated order in both sorts.
    assert ours == theirs
    for a, b in itertools.pairwise(ours):
        assert (pep440.Version.parse(a) == pep440.Version.parse(b)) == (
            PackagingVersion(a) == PackagingVersion(b)
        ), (a, b)


@pytest.mark.parametrize(
    "spelling",
    [
        "0.1.14-RC.1",
        "0.1.14.pre",
        "v0.1.14",
        "0.1.14_post_2",
        "0.1.14-1",
        "0.1.14.dev",
        "0.1.14a",
        "0.1.14c3",
        "0.1.14-rev4",
        "0.1.14.alpha-2.dev1+Local-Part.07",
        " 0.28.dev123+g1a2b3c4 ",
        "01.02.03",
    ],
)
def test_normal_form_agrees_with_packaging(spelling: str) -> None:
    assert str(pep440.Version.parse(spelling)) == str(PackagingVersion(spelling))


@pytest.mark.parametrize("text", ["", "0.1.15-custom", "nightly", "0.1.15+", "0.1..15", "1.0+a+b"])
def test_not_a_version_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError, match="is not a PEP 440 version"):
        pep440.Version.parse(text)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("0.1.15", "is not an operator"),
        (">= 0.1.15 <0.2", "is not an operator"),
        (">=0.1.15,", "empty clause"),
        ("=>0.1.15", "is not an operator"),
        ("===0.1.15", "arbitrary equality"),
        (">=0.28.*", "only after == or !="),
        ("==0.28rc1.*", "only after a release"),
        (">=0.1.14+g1a2b", "local label"),
        ("~=1", "two parts or more"),
        ("~=0.1.14rc1", "two parts or more"),
        (">=zero", "is not a PEP 440 version"),
    ],
)
def test_unreadable_spec_is_a_value_error(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        pep440.Specifier.parse(spec)
