"""Files metriclint writes for a project: a first registry drafted from an analysis (`init`,
with `settle` deciding a facet from the code and the texts), and tooltip tables and docs pages
generated from the registry (`generate`).

Takes an `engine.Analysis` run without a registry, or a `Registry`; gives YAML, JS/TS/JSON or
Markdown text.
"""
