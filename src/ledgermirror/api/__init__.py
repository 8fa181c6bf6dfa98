"""The REST query service: parse -> plan -> query -> render."""
