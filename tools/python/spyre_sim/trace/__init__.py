"""Trace tools: reading (`read`), the report (`report`, `analysis`), the HTML timeline (`view`),
checks (`validate`), and the `spyre-sim trace` front end (`cli`)."""
