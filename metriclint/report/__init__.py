"""Views of a finished run: findings in every output format (`formats`), the audit and its
formats (`audit`, `audit_formats`), one metric's evidence (`metric`, for explain-metric) and
the progress bar (`progress`).

Takes an `engine.Analysis` (or its report); gives text, JSON, SARIF, Markdown or HTML.
"""
