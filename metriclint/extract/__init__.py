"""The per-file step of a run: which files to read, and what each one holds.

Takes the settings' paths and excludes; gives the files (`discover`) and, per file, an
`Extraction` with each text's readings or a `ReadFailure` (`runner`: cache look-up, then
worker processes in batches), in file order whatever order the workers finish in. The runner
is handed the reading function, so it needs nothing above the sources. `cache` keeps each
file's result between runs; `prune` keeps the folder to what the last runs used, and cleans it;
`kept` keeps what the last run made of each file, so a warm run skips its unchanged files.
"""
