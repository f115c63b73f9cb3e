"""The Textual app. The only package that imports textual."""
