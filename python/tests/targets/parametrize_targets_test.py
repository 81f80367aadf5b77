"""parametrize_targets, exclude_targets, known_failing_targets and upstream's own pattern."""

# The inner sessions run through pytest's own pytester plugin (off by default).
pytest_plugins = ["pytester"]


def test_explicit_list_runs_each_target_as_its_own_test(run_inner) -> None:
    result = run_inner(
        """
        from tvm_conformance.testing import parametrize_targets

        @parametrize_targets("llvm", "metal")
        def test_a(target, dev):
            assert dev.exist
        """,
        targets="llvm;metal",
    )
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        ["*test_a[[]llvm[]] PASSED*", "*test_a[[]metal[]] SKIPPED (target 'metal' cannot run*"]
    )


def test_explicit_list_runs_only_targets_in_force(run_inner) -> None:
    result = run_inner(
        """
        import pytest
        from tvm_conformance.testing import parametrize_targets

        @parametrize_targets("llvm", "cuda")
        def test_listed(target):
            assert target == "llvm"

        @pytest.mark.parametrize("target", ["llvm", "cuda"])
        def test_upstream(target):
            assert target == "llvm"
        """,
        targets="llvm",
    )
    result.assert_outcomes(passed=2, skipped=2)
    result.stdout.fnmatch_lines(
        [
            "*test_listed[[]llvm[]] PASSED*",
            "*test_listed[[]cuda[]] SKIPPED*",
            "*test_upstream[[]llvm[]] PASSED*",
            "*test_upstream[[]cuda[]] SKIPPED*",
            "SKIPPED [[]1[]] *: cuda tests disabled by TVM_TEST_TARGETS environment variable",
            "SKIPPED [[]1[]] *: cuda tests disabled by TVM_TEST_TARGETS environment variable",
        ]
    )


def test_bare_decorator_uses_the_targets_in_force(run_inner) -> None:
    result = run_inner(
        """
        from tvm_conformance.testing import parametrize_targets

        @parametrize_targets
        def test_bare(target):
            pass

        @parametrize_targets()
        def test_called_empty(target):
            pass
        """,
        targets="llvm;c",
    )
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(
        ["*test_bare[[]llvm[]] PASSED*", "*test_bare[[]c[]] PASSED*", "*test_called_empty[[]c[]]*"]
    )


def test_taking_target_or_dev_parametrizes_implicitly(run_inner) -> None:
    result = run_inner(
        """
        def test_target_only(target):
            assert target in ("llvm", "c")

        def test_dev_only(dev):
            assert str(dev) == "cpu:0"

        def test_neither():
            pass
        """,
        targets="llvm;c",
    )
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(
        [
            "*test_target_only[[]c[]] PASSED*",
            "*test_dev_only[[]llvm[]] PASSED*",
            "*test_neither PASSED*",
        ]
    )


def test_explicit_entry_that_is_not_a_target_is_a_collection_error(run_inner) -> None:
    result = run_inner(
        """
        from tvm_conformance.testing import parametrize_targets

        @parametrize_targets("llvm", "nosuch")
        def test_a(target):
            pass
        """,
        targets="llvm",
    )
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*parametrize_targets of test_inner.py::test_a entry 'nosuch' is not a TVM target*"]
    )
    assert "Traceback" not in result.stdout.str()


def test_exclude_targets_never_generates_the_target(run_inner) -> None:
    result = run_inner(
        """
        from tvm_conformance.testing import exclude_targets

        @exclude_targets("c")
        def test_a(target):
            assert target == "llvm"
        """,
        targets="llvm;c",
    )
    result.assert_outcomes(passed=1)
    assert "test_a[c]" not in result.stdout.str()


def test_known_failing_targets_xfail_only_on_those_targets(run_inner) -> None:
    result = run_inner(
        """
        from tvm_conformance.testing import known_failing_targets

        @known_failing_targets("c", reason="c codegen lacks the feature")
        def test_a(target):
            assert target != "c"
        """,
        targets="llvm;c",
    )
    result.assert_outcomes(passed=1, xfailed=1)
    result.stdout.fnmatch_lines(["XFAIL *test_a[[]c[]] - c codegen lacks the feature (target 'c')"])


def test_known_failing_target_that_passes_fails_strictly(run_inner) -> None:
    result = run_inner(
        """
        from tvm_conformance.testing import known_failing_targets

        @known_failing_targets("c", reason="expected to fail")
        def test_a(target):
            pass
        """,
        targets="llvm;c",
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*test_a[[]c[]] FAILED*", "[[]XPASS(strict)[]] expected to fail (target 'c')"]
    )


def test_upstream_param_pattern_works_beside_the_plugin(run_inner) -> None:
    result = run_inner(
        """
        import pytest
        import tvm.testing

        @pytest.mark.parametrize("target", ["llvm", pytest.param("metal", marks=pytest.mark.gpu)])
        def test_upstream(target, dev):
            if not tvm.testing.device_enabled(target):
                pytest.skip(f"{target} not enabled")
            assert dev.exist

        @pytest.mark.parametrize("target,impl", [("llvm", 1), ("llvm", 2), ("metal", 3)])
        def test_tuples(target, impl):
            pass
        """,
        targets="llvm;metal",
    )
    result.assert_outcomes(passed=3, skipped=2)
    result.stdout.fnmatch_lines(
        [
            "*test_upstream[[]llvm[]] PASSED*",
            "*test_upstream[[]metal[]] SKIPPED*",
            "*test_tuples[[]llvm-2[]] PASSED*",
            "*test_tuples[[]metal-3[]] SKIPPED*",
        ]
    )


def test_decorators_accept_json_style_dict_targets(run_inner) -> None:
    result = run_inner(
        """
        from tvm_conformance.testing import exclude_targets, parametrize_targets

        @parametrize_targets("llvm", {"kind": "opencl", "device": "mali"})
        def test_listed(target):
            pass

        @exclude_targets({"kind": "opencl", "device": "mali"})
        def test_excluded(target):
            pass
        """,
        targets='llvm;{"kind": "opencl", "device": "mali"}',
    )
    result.assert_outcomes(passed=2, skipped=1)
    result.stdout.fnmatch_lines(["*test_listed[[]opencl-device=mali[]] SKIPPED*"])
    assert "test_excluded[opencl-device=mali]" not in result.stdout.str()


def test_excluding_every_target_skips_with_a_reason(run_inner) -> None:
    result = run_inner(
        """
        from tvm_conformance.testing import exclude_targets

        @exclude_targets("llvm")
        def test_a(target):
            pass
        """,
        targets="llvm",
    )
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["SKIPPED * exclude_targets removes every target in force (llvm)"])


def test_a_variant_whose_target_is_excluded_does_not_hold_the_case(run_inner) -> None:
    # In the Bazel variant of the excluded target (a GPU runner's `_cuda` one) the case is not
    # that target's: deselected like another target's case, never a skip the GPU verdict fails.
    source = """
        from tvm_conformance.testing import exclude_targets

        @exclude_targets("llvm")
        def test_a(target):
            pass

        def test_b(target):
            pass
        """
    result = run_inner(source, "--tvm-variant=llvm", targets="llvm")
    result.assert_outcomes(passed=1, deselected=1)
    result.stdout.fnmatch_lines(["*test_b[[]llvm[]] PASSED*"])
