"""The executable erratum: one structured file per paper (``files/<protocol>.json``) from which
``docs/protocols/<protocol>.md`` and the page ``/paper/<protocol>`` are both generated."""
