"""The version of jupyter-tracejit, defined here once: the Python package (pyproject's dynamic version), the widget
module the front end registers (labextension/scripts/generate-protocol.mjs writes it into protocol.generated.ts) and
npm's package.json (which `npm run protocol:check` holds equal to it) all read this."""

__version__ = "0.1.0"
