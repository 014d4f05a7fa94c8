"""What the reset server's log may show (issue 18, item 3): never the token, in any form it can
arrive in (a ``/t/`` path, a query value, an echoed header); every query value masked; a lease
id (its holder's credential) only as its first 6 characters. Pure function, no server: the
server's own log of real requests is checked in test_serve.py."""
from sitectl.server import redact

TOKEN = "tok-Secret_0123456789"
LEASE = "AbCdEf0123456789xyz_-QRS"


def test_the_token_and_query_values_never_show():
    lines = [
        f'"GET /t/{TOKEN}/i/2/reset HTTP/1.1" 200 -',
        f'"GET /reset?token={TOKEN} HTTP/1.1" 401 -',
        f'"GET /reset?a=1&token={TOKEN};x={TOKEN} HTTP/1.1" 401 -',
        f'code 400, message Bad request syntax (\'Authorization: Bearer {TOKEN}\')',
        f'"GET /t/{TOKEN[:-1]}/reset HTTP/1.1" 401 -',  # a near miss is a secret too
    ]
    for line in lines:
        out = redact(line, TOKEN)
        assert TOKEN not in out and TOKEN[:-1] not in out, out
    assert redact(lines[0], TOKEN) == '"GET /t/***/i/2/reset HTTP/1.1" 200 -'
    assert redact(lines[2], TOKEN) == '"GET /reset?a=***&token=***;x=*** HTTP/1.1" 401 -'


def test_lease_ids_are_cut_to_six_characters():
    for path in (f"/l/{LEASE}/reset", f"/l/{LEASE}/status", f"/api/leases/{LEASE}", f"/api/leases/{LEASE}/heartbeat"):
        out = redact(f'"POST {path} HTTP/1.1" 200 -', TOKEN)
        assert LEASE not in out and LEASE[:7] not in out and f"/{LEASE[:6]}..." in out, out
    assert redact('"GET /api/status HTTP/1.1" 200 -', TOKEN) == '"GET /api/status HTTP/1.1" 200 -'
