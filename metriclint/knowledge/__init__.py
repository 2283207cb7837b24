"""What metriclint knows before it reads a project: the facets and their phrases
(`vocabulary`, `reading_rules`), what known calls compute (`code`, from rules/code), and the
project's registry (`registry`).

Takes the built-in `rules/` data and the registry file; gives facets, a `Vocabulary`, the code
knowledge base and a `Registry`, or every problem in them as `ConfigError`.
"""
