"""Route table of the replica: Magento-style regex routes per area (frontend, admin, rest),
matched case-insensitively against the path with a trailing slash; first match wins."""
import re

from flask import request

ROUTES = []


def route(pattern, methods=("GET",), area="frontend"):
    def deco(fn):
        ROUTES.append((re.compile("^" + pattern + "$", re.I), set(methods), area, fn))
        return fn
    return deco


def match(path, area):
    p = path if path.endswith("/") else path + "/"
    for rx, methods, a, fn in ROUTES:
        if a != area:
            continue
        m = rx.match(p)
        if m and request.method.replace("HEAD", "GET") in methods:
            return fn, m.groupdict()
    return None, None
