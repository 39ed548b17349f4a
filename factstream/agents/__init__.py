"""The stream agents: editor, materializer, query."""
