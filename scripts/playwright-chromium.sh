#!/bin/sh
# Debian's Chromium as the browser of Playwright 1.44 (the version BrowserGym 0.14.3 pins):
# `make webarena-client` installs this file where Playwright looks for its own Chromium
# (.cache/pw-browsers/chromium-1117/chrome-linux/chrome; no browser download works here).
#
# RenderDocument is added to Playwright's --disable-features list (the last such switch is
# the one Chromium reads, so it is appended to Playwright's, not passed as a second one).
# With it on (Chromium's default since well after 1.44's Chromium 125), a tab closed right
# after a form login (BrowserGym's ui_login: click "Sign in", then page.close()) often never
# closes: Chromium takes Target.closeTarget and sends no detachedFromTarget, and Playwright's
# --disable-hang-monitor means nothing ends the wait. Measured on Chromium 156 with the forum
# replica: runs of 8 login-then-close rounds hung in 5 of 10 as is, in none of 20 with it off;
# tests/replicas/test_browser_wrapper.py repeats that check.
for arg; do
  shift
  case $arg in --disable-features=*) arg="$arg,RenderDocument" ;; esac
  set -- "$@" "$arg"
done
exec /usr/lib/chromium/chromium --no-sandbox "$@"
