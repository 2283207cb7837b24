"""`metriclint server`: the engine embedded in a language server, for editors.

Takes the editor's workspace folders and unsaved buffers (LSP over stdio); gives diagnostics,
hovers (the explain-metric view), definitions, references and code actions. `project` keeps
one folder's analysis in memory, `language_server` the workspace's projects and buffers,
`handlers` the LSP side; the rest turn findings and places into LSP terms. Needs the `server`
extra (pygls), which nothing below it imports.
"""
