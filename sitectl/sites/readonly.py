"""Drivers of WebArena's three read-only sites: wikipedia (kiwix-serve), map (OpenStreetMap
frontend + tile/Nominatim/OSRM backends) and the homepage.

None of them has a login (webarena-official.md §1.5-§1.7: map tasks use ``storage_state:
null``; kiwix and the homepage have no accounts), so ``login``/``probe_logged_in``/
``login_page_renders`` keep the base class's ``NotImplementedError``. Their health probes are
declared in ``healthchecks/kiwix.yaml``, ``osm.yaml`` and ``homepage.yaml``.

Sources: webarena-official.md §1.5 (map backend health checks, frontend success criteria),
§1.6 (kiwix healthy URL), §1.7 (homepage routes, template placeholder), §1.9 (official smoke
test incl. ``:3000/tile/0/0/0.png``); contract-postmill-gitlab-map.md §3 (map URL shapes and
DOM hooks), §4 (kiwix-serve 3.3.0 routing), §5 (probes telling booting from broken).
"""
from __future__ import annotations

from typing import ClassVar

from sitectl.sites.base import SiteDriver, register


class ReadOnlyDriver(SiteDriver):
    """A site without login; its health is declared in ``healthchecks/<kind>.yaml``."""

    has_login: ClassVar[bool] = False


@register
class KiwixDriver(ReadOnlyDriver):
    """WebArena "wikipedia": kiwix-serve 3.3.0 on container port 80 (host 8888). No login.

    ``base_url`` may be WebArena's WIKIPEDIA value (the landing page URL) or the bare origin.
    """

    kind: ClassVar[str] = "kiwix"


@register
class OsmDriver(ReadOnlyDriver):
    """WebArena "map": openstreetmap-website frontend on 3000 (+ tile/Nominatim/OSRM). No login."""

    kind: ClassVar[str] = "osm"


@register
class HomepageDriver(ReadOnlyDriver):
    """WebArena homepage: Flask app on 4399 (WebArena's HOMEPAGE env is a dummy). No login."""

    kind: ClassVar[str] = "homepage"
