"""PEP 440 versions and version specifiers, on the standard library alone.

The deviation registry (:mod:`tvm_conformance.deviation_registry`) is read by the verdict with
whatever ``python3`` runs it, where ``packaging`` may be missing, so the registry cannot lean on
it. This module reads versions and specifiers as PEP 440 does, and as ``packaging`` does with
pre-releases admitted (``SpecifierSet(spec).contains(version, prereleases=True)``); a test
compares the two over a generated list of versions (python/tests/harness/pep440_test.py)::

    >>> matches(Version.parse("0.1.13rc2"), ">=0.1.13")
    False
    >>> matches(Version.parse("0.28.dev123+g1a2b3c4"), ">=0.27,<0.28")
    False

Pre-releases and dev builds sort before their release (``0.1.14.dev3 < 0.1.14a1 < 0.1.14rc1 <
0.1.14 < 0.1.14.post1``); a local label (``+g1a2b3c4``) sorts after the same public version and
is ignored by every clause but ``==``/``!=`` with a local label of their own. PEP 440's rule for
the exclusive clauses holds, as ``packaging`` 26 reads it: ``<V`` holds for no pre-release of V
(``V.dev0`` and later; V itself not a pre-release), ``>V`` for no post-release or local build of
V. Not supported (refused with ValueError): the
arbitrary-equality ``===``, and ``.*`` or ``~=`` with a version that has a pre, post or dev
part (PEP 440 and ``packaging`` releases read those differently).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# PEP 440's permissive form (Appendix: parsing), normalised by Version.parse.
_VERSION = re.compile(
    r"""
    v?
    (?:(?P<epoch>[0-9]+)!)?
    (?P<release>[0-9]+(?:\.[0-9]+)*)
    (?P<pre>[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>[0-9]+)?)?
    (?P<post>(?:-(?P<post_n1>[0-9]+))|(?:[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>[0-9]+)?))?
    (?P<dev>[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>[0-9]+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
    """,
    re.VERBOSE | re.IGNORECASE,
)
_PRE_LETTER = {"a": "a", "alpha": "a", "b": "b", "beta": "b", "c": "rc", "rc": "rc"}
_PRE_LETTER.update(pre="rc", preview="rc")
_PRE_RANK = {"a": 0, "b": 1, "rc": 2}
_OPERATORS = ("~=", "==", "!=", "<=", ">=", "<", ">")
_CLAUSE = re.compile(r"(?P<op>~=|===|==|!=|<=|>=|<|>)\s*(?P<version>[^\s,;]+)")


@dataclass(frozen=True)
class Version:
    """One PEP 440 version, normalised: ``Version.parse("1.0-RC.1")`` is ``1.0rc1``."""

    epoch: int
    release: tuple[int, ...]
    pre: tuple[str, int] | None = None  # ("a" | "b" | "rc", number)
    post: int | None = None
    dev: int | None = None
    local: tuple[int | str, ...] | None = None
    _key: tuple[object, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_key", self._sort_key())

    @classmethod
    def parse(cls, text: str) -> Version:
        """Read ``text`` as a PEP 440 version; anything else is a ValueError naming it."""
        match = _VERSION.fullmatch(text.strip())
        if match is None:
            raise ValueError(f"{text!r} is not a PEP 440 version")
        pre = None
        if match["pre"]:
            pre = (_PRE_LETTER[match["pre_l"].lower()], int(match["pre_n"] or 0))
        post = None
        if match["post"]:
            post = int(match["post_n1"] or match["post_n2"] or 0)
        local = None
        if match["local"]:
            local = tuple(
                int(part) if part.isdigit() else part.lower()
                for part in re.split(r"[-_.]", match["local"])
            )
        return cls(
            epoch=int(match["epoch"] or 0),
            release=tuple(int(part) for part in match["release"].split(".")),
            pre=pre,
            post=post,
            dev=int(match["dev_n"] or 0) if match["dev"] else None,
            local=local,
        )

    def __str__(self) -> str:
        text = f"{self.epoch}!" if self.epoch else ""
        text += ".".join(str(part) for part in self.release)
        if self.pre is not None:
            text += f"{self.pre[0]}{self.pre[1]}"
        if self.post is not None:
            text += f".post{self.post}"
        if self.dev is not None:
            text += f".dev{self.dev}"
        if self.local is not None:
            text += "+" + ".".join(str(part) for part in self.local)
        return text

    @property
    def is_prerelease(self) -> bool:
        """A pre-release (a, b, rc) or a dev build."""
        return self.pre is not None or self.dev is not None

    @property
    def public(self) -> Version:
        """The version without its local label."""
        return Version(self.epoch, self.release, self.pre, self.post, self.dev)

    @property
    def base(self) -> Version:
        """Epoch and release only: ``1.0rc1.post2.dev3+x`` -> ``1.0``."""
        return Version(self.epoch, self.release)

    def _sort_key(self) -> tuple[object, ...]:
        # PEP 440's order. Trailing zeros of the release do not count (1.0 == 1.0.0). A dev
        # build of a release sorts before its pre-releases (1.0.dev1 < 1.0a1); a release sorts
        # after them; a local label sorts after the same public version, and inside a label a
        # word sorts before a number.
        release = list(self.release)
        while len(release) > 1 and release[-1] == 0:
            release.pop()
        if self.pre is not None:
            pre: tuple[int, ...] = (1, _PRE_RANK[self.pre[0]], self.pre[1])
        elif self.dev is not None and self.post is None:
            pre = (0,)
        else:
            pre = (2,)
        post = (0,) if self.post is None else (1, self.post)
        dev = (1,) if self.dev is None else (0, self.dev)
        if self.local is None:
            local: tuple[object, ...] = (0,)
        else:
            local = (1,) + tuple(
                (1, part, "") if isinstance(part, int) else (0, 0, part) for part in self.local
            )
        return (self.epoch, tuple(release), pre, post, dev, local)

    def __lt__(self, other: Version) -> bool:
        return self._key < other._key

    def __le__(self, other: Version) -> bool:
        return self._key <= other._key

    def __gt__(self, other: Version) -> bool:
        return self._key > other._key

    def __ge__(self, other: Version) -> bool:
        return self._key >= other._key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Version) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)


@dataclass(frozen=True)
class Clause:
    """One clause of a specifier: ``>=0.1.13``, ``==0.28.*``, ``~=0.27.0``."""

    op: str
    version: Version
    prefix: bool = False  # `==V.*` / `!=V.*`

    def __str__(self) -> str:
        return f"{self.op}{self.version}{'.*' if self.prefix else ''}"

    def holds(self, candidate: Version) -> bool:
        """True if ``candidate`` meets this clause (pre-releases admitted)."""
        spec = self.version
        if self.op == "~=":
            # ~=1.4.5 is >=1.4.5, ==1.4.*: the release less its last part is the prefix.
            prefix = Clause("==", Version(spec.epoch, spec.release[:-1]), prefix=True)
            return Clause(">=", spec).holds(candidate) and prefix.holds(candidate)
        if self.op in ("==", "!="):
            return self._equal(candidate) is (self.op == "==")
        public = candidate.public
        if self.op == "<=":
            return public <= spec
        if self.op == ">=":
            return public >= spec
        if self.op == "<":
            # PEP 440: <V holds for no pre-release of V (V.devN and later) unless V is one.
            if not spec.is_prerelease and candidate.is_prerelease:
                earliest = Version(spec.epoch, spec.release, spec.pre, spec.post, dev=0)
                if candidate >= earliest:
                    return False
            return candidate < spec
        # ">": no post-release of V (unless V is one), and no local build of V.
        if spec.post is None and candidate.post is not None:
            if Version(candidate.epoch, candidate.release, candidate.pre) == spec:
                return False
        if candidate.local is not None and candidate.public == spec:
            return False
        return candidate > spec

    def _equal(self, candidate: Version) -> bool:
        spec = self.version
        if self.prefix:
            # ==0.28.* holds for 0.28, 0.28.1, 0.28.dev3+g1a2b, 0.28rc1: the release, padded
            # with zeros, starts with the spec's release.
            if candidate.epoch != spec.epoch:
                return False
            width = len(spec.release)
            padded = candidate.release + (0,) * max(0, width - len(candidate.release))
            return padded[:width] == spec.release
        if spec.local is None:
            return candidate.public == spec
        return candidate == spec


@dataclass(frozen=True)
class Specifier:
    """A comma-separated set of clauses, all of which must hold; "" holds for every version."""

    clauses: tuple[Clause, ...]

    @classmethod
    def parse(cls, text: str) -> Specifier:
        """Read ``text`` (``">=0.1.13, <0.1.15"``); an unreadable clause is a ValueError."""
        clauses = []
        for part in (p.strip() for p in text.split(",")):
            if not part:
                if text.strip():
                    raise ValueError(f"version spec {text!r} has an empty clause")
                continue
            clauses.append(_parse_clause(text, part))
        return cls(tuple(clauses))

    def __str__(self) -> str:
        return ",".join(str(clause) for clause in self.clauses)

    def contains(self, version: Version | str) -> bool:
        """True if ``version`` meets every clause (pre-releases and dev builds admitted)."""
        if isinstance(version, str):
            version = Version.parse(version)
        return all(clause.holds(version) for clause in self.clauses)


def _parse_clause(spec: str, part: str) -> Clause:
    match = _CLAUSE.fullmatch(part)
    if match is None:
        raise ValueError(
            f"version spec {spec!r}: {part!r} is not an operator ({', '.join(_OPERATORS)}) "
            "and a version, like '>=0.1.15'"
        )
    op, text = match["op"], match["version"]
    if op == "===":
        raise ValueError(f"version spec {spec!r}: '===' (arbitrary equality) is not supported")
    prefix = text.endswith(".*")
    if prefix:
        text = text[:-2]
    try:
        version = Version.parse(text)
    except ValueError:
        raise ValueError(f"version spec {spec!r}: {text!r} is not a PEP 440 version") from None
    where = f"version spec {spec!r}: {part!r}"
    if prefix and op not in ("==", "!="):
        raise ValueError(f"{where}: '.*' goes only after == or !=")
    if prefix and (version.pre, version.post, version.dev, version.local) != (None,) * 4:
        raise ValueError(f"{where}: '.*' goes only after a release (like '==0.28.*')")
    if version.local is not None and op not in ("==", "!="):
        raise ValueError(f"{where}: a local label (+...) goes only after == or !=")
    if op == "~=" and (
        len(version.release) < 2 or version.is_prerelease or version.post is not None
    ):
        raise ValueError(f"{where}: '~=' goes only before a release of two parts or more")
    return Clause(op, version, prefix)


def matches(version: Version | str, spec: str) -> bool:
    """True if ``version`` meets ``spec`` (a PEP 440 specifier; "" holds for any version)."""
    return Specifier.parse(spec).contains(version)
