"""allocscope simulation core: the kernel, the protocols, monitors, the explorer and the gallery.

Pure Python: nothing in this package imports the web application, FastAPI or Jinja2.
"""
