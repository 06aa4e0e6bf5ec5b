/**
 * The ipywidgets module name and version of the frontend. The version is the package's one version
 * (jupyter_tracejit/_version.py), written into protocol.generated.ts.
 */
import { PACKAGE_VERSION } from './model/protocol.generated';

export const MODULE_NAME = 'jupyter-tracejit';
export const MODULE_VERSION = PACKAGE_VERSION;
/** The semver range the Python widget asks for in `_model_module_version` / `_view_module_version`. */
export const MODULE_SEMVER = `^${MODULE_VERSION}`;

/** The MIME type of a saved run (`TraceRun.to_json()`), rendered without a kernel. */
export const MIME_TYPE = 'application/vnd.jupyter.tracejit+json';
/** The MIME type of the placeholder `%trace` shows while the kernel traces (explorer.schema.json TraceProgress). */
export const PROGRESS_MIME_TYPE = 'application/vnd.jupyter.tracejit.progress+json';
