/**
 * The ipywidgets module name and version of the frontend.
 *
 * Keep MODULE_VERSION equal to `version` in package.json and to `jupyter_tracejit.__version__`
 * (tests/test_frontend_build.py checks all three).
 */
export const MODULE_NAME = 'jupyter-tracejit';
export const MODULE_VERSION = '0.1.0';
/** The semver range the Python widget asks for in `_model_module_version` / `_view_module_version`. */
export const MODULE_SEMVER = `^${MODULE_VERSION}`;

/** The MIME type of a saved run (`TraceRun.to_json()`), rendered without a kernel. */
export const MIME_TYPE = 'application/vnd.jupyter.tracejit+json';
/** The MIME type of the placeholder `%trace` shows while the kernel traces (explorer.schema.json TraceProgress). */
export const PROGRESS_MIME_TYPE = 'application/vnd.jupyter.tracejit.progress+json';
