"""The ground floor: helpers every stage may use, and that know nothing of metrics' meaning.

Takes bytes, paths and YAML text; gives positioned YAML nodes (`marked_yaml`), metric key
templates (`keys`), how paths are shown and matched (`paths`), safe reads and atomic writes
(`files`), where the built-in `rules/` data is and its word lists (`builtin`), plain JSON
values for the cache (`plain`), bounded-time patterns (`patterns`) and places in a text
(`locate`).
"""
