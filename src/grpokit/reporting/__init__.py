"""After a run: curves.png and report.html for a run directory (`report`, `html`)."""
