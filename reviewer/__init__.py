"""reviewer: evaluate AI agents from the terminal."""
