"""CLI commands beyond import/open, one module per area; each registers itself on the group."""
