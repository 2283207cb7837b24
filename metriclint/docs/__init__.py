"""The docs site's generated pages: a page per rule (and `metriclint rule`), the facet
vocabulary and the code knowledge, written by `python -m metriclint.docs`.

Takes the rules (checks/), `rules/facets/*.yaml` and `rules/code/*.yaml`; gives Markdown pages
for `docs/`. The pages are committed, so the site builds without running metriclint, and
tests/test_docs.py fails when one is stale.
"""
