"""pytest plugin (installed with sitectl, entry point ``pytest11``): reset the sites a test
names and hand it a logged-in storage state.

::

    import pytest

    @pytest.mark.sitectl_sites("gitlab", "reddit")
    def test_agent_posts(sitectl_sites):
        ctx = browser.new_context(storage_state=sitectl_sites.storage_state_path)
        page.goto(sitectl_sites.urls["reddit"])

Options: ``--sitectl-stack``, ``--sitectl-instance``, ``--sitectl-host`` (default: what
``sitectl`` resolves from ``sitectl.yaml``, the running containers and the stack). The
instance must be up (``sitectl up``); the plugin does not start containers.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest


def pytest_addoption(parser):
    g = parser.getgroup("sitectl", "sitectl environments")
    g.addoption("--sitectl-stack", default=None, help="sitectl stack (default: sitectl.yaml, else mini)")
    g.addoption("--sitectl-instance", type=int, default=None, help="sitectl instance number (default 0)")
    g.addoption("--sitectl-host", default=None, help="host the sites answer on (default: as sitectl resolves it)")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "sitectl_sites(*sites, role='default'): reset these sites to golden before the test "
                   "and log them in (fixture sitectl_sites)")


@dataclass
class PreparedSites:
    """What ``sitectl_sites`` hands a test.

    Attributes:
        env: the :class:`sitectl.Environment`.
        sites: the site keys the marker named.
        storage_state: Playwright storage state of those of the sites that have a login, logged
            in (dict); None when none has one (the map, the wiki).
        storage_state_path: the same written as a file (mode 0600) under the test's tmp_path.
        urls: base URL per site key.
        reset: one row per site reset (``method``, ``seconds`` ...).
    """

    env: object
    sites: list[str]
    storage_state: dict | None
    storage_state_path: str | None
    urls: dict[str, str]
    reset: list[dict] = field(default_factory=list)


@pytest.fixture(scope="session")
def sitectl_env(pytestconfig):
    """The session's :class:`sitectl.Environment` (options ``--sitectl-*``)."""
    from sitectl import Environment  # noqa: PLC0415 - pytest loads this plugin in every session: nothing heavy until a fixture runs

    return Environment(stack=pytestconfig.getoption("sitectl_stack"),
                       instance=pytestconfig.getoption("sitectl_instance"),
                       host=pytestconfig.getoption("sitectl_host"))


@pytest.fixture
def sitectl_sites(request, sitectl_env, tmp_path) -> PreparedSites:
    """Reset the sites named by ``@pytest.mark.sitectl_sites(...)`` (the mutable ones) and log
    them in together; a test without the marker gets a usage error."""
    from sitectl.ops import login as loginmod  # noqa: PLC0415 - see above

    marker = request.node.get_closest_marker("sitectl_sites")
    if marker is None or not marker.args:
        pytest.fail("the sitectl_sites fixture needs @pytest.mark.sitectl_sites('site', ...)", pytrace=False)
    sites = [str(s) for s in marker.args]
    role = marker.kwargs.get("role", "default")
    stack = sitectl_env.target.stack
    mutable = [s for s in sites if s in stack.sites and stack.sites[s].mutable]
    rows = sitectl_env.reset(mutable) if mutable else []
    # Only sites with a login get one (WebArena's map and wiki have none: gitlab+wikipedia tasks
    # use gitlab's state); with none the state is None.
    from sitectl.sites.base import DRIVERS  # noqa: PLC0415 - see above

    login = [s for s in sites if s in stack.sites and DRIVERS[stack.sites[s].kind.value].has_login
             and role in stack.sites[s].accounts]
    state, path = None, None
    if login:
        state = sitectl_env.storage_state(login if len(login) > 1 else login[0], role)
        path = Path(tmp_path) / loginmod.state_file_name(sorted(login) if len(login) > 1 else login)
        loginmod.write_state(path, state)
    return PreparedSites(env=sitectl_env, sites=sites, storage_state=state,
                         storage_state_path=str(path) if path else None,
                         urls={s: sitectl_env.urls[s] for s in sites if s in sitectl_env.urls}, reset=rows)
