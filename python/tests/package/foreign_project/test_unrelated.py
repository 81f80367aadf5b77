"""Tests that do not use the plugin: its presence must not change them."""

import pytest


@pytest.fixture
def target() -> str:
    return "deploy-server"


def test_own_target_fixture(target: str) -> None:
    assert target == "deploy-server"


def test_plain() -> None:
    assert 1 + 1 == 2


def test_plugin_came_from_the_installed_wheel(pytestconfig: pytest.Config) -> None:
    plugin = pytestconfig.pluginmanager.get_plugin("tvm_conformance.pytest_plugin")
    assert plugin is not None, "the tvm_conformance plugin is not loaded"
    assert "site-packages" in plugin.__file__, plugin.__file__
