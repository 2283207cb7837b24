"""`metriclint fix`: findings in, rewritten files out.

Takes the findings of a run with their fixes (model.Fix); gives, per file, the rewrite that
settles them (`rewrite`), written only if it still parses and the file has not changed.
"""
