"""Controllers: the glue between keys, session events and widgets."""
