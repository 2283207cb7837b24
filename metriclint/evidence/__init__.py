"""What the code computes, across modules: code facts followed from the computing call through
project functions into logged keys.

Takes each file's function summaries and calls (model.FunctionFlow, model.CallFlow) and the
known metrics; gives `CodeClaim`s, the evidence ML006 holds texts against. A framework's keys
reach them through the project's classes (`inherited.py`), less those a callback the project
hands the framework may rewrite (`callbacks.py`). Also the keys that only the project as a
whole names: those a call fills into a template (`built_keys.py`) and the prometheus_client
metrics named by another module's constant, with their help texts (`constants.py`); all the
code of the project makes together is gathered in `products.py`.
"""
