"""Magento 2.4 contract replica: storefront + admin (/admin) + REST (/rest) in one Flask app.

A test double of the surface WebArena and sitectl use (research/contract-magento.md,
research/webarena-official.md); not Magento. Pages are plain server-rendered HTML carrying
the form field names, labels, ids and classes that evaluators and drivers read.

This module creates the app (gunicorn: `magento_replica:app`). Its only Flask routes are the
catch-all of dispatch.py; the pages are Magento-style regex routes (routing.py) defined by area:
catalog, customer, checkout, reviews, orders (storefront), admin, rest. Shared helpers live in
web.py and storefront.py; DB, config, tokens and sessions in ../mage.py (also used by
bin/magento and the seed scripts).
"""
from flask import Flask

# Importing the route modules fills routing.ROUTES; this order is the table's order (the first
# matching route of an area wins), the order the routes had in the single-file app.
from . import catalog, customer, checkout, reviews, orders, admin, rest  # noqa: F401
from . import dispatch

app = Flask(__name__)
app.register_blueprint(dispatch.bp)
