"""The dashboards of dashboards/, one module per dashboard (see dashboards/generate.py)."""
