/**
 * The run of a `.pt` / `.pt2` file, asked of the server extension (jupyter_tracejit/server/handler.py).
 *
 * A POST with the path in a JSON body, sent by `ServerConnection.makeRequest`, which adds the server's XSRF token
 * (`X-XSRFToken`) or its auth token: the server answers a GET (what a link or another site's page could make the
 * browser send, with the login cookie) with 405, so only this page can start a load.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

/** The server extension's route (jupyter_tracejit/server/handler.py OPEN_ROUTE), under the server's base URL. */
export const OPEN_ROUTE = 'jupyter-tracejit/api/open';

/**
 * The run of the file at `path` (relative to the server's root dir) as JSON text, from the server extension;
 * throws an Error with the server's message (too large, outside the root dir, busy, torch missing there, ...).
 * `signal` aborts the request (the document closed): the server then stops the process reading the file.
 * `imports` are modules the reading process imports before the load (the "retry importing" button: a `.pt2`
 * whose program returns a class a module registers with torch's pytree); sent only when there are some.
 */
export async function fetchRun(
  path: string,
  settings: ServerConnection.ISettings,
  signal?: AbortSignal,
  imports: readonly string[] = []
): Promise<string> {
  const url = URLExt.join(settings.baseUrl, OPEN_ROUTE);
  const body = JSON.stringify(imports.length ? { path, imports } : { path });
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(
      url,
      { method: 'POST', body, headers: { 'Content-Type': 'application/json' }, signal },
      settings
    );
  } catch (err) {
    throw new Error(`The Jupyter server could not be reached: ${err instanceof Error ? err.message : String(err)}`, {
      cause: err
    });
  }
  const text = await response.text();
  if (response.ok) {
    return text;
  }
  throw new Error(serverMessage(text) ?? serverMissing(response.status, text));
}

/** The `message` of the server's JSON error, if it sent one. */
function serverMessage(text: string): string | null {
  try {
    const message = (JSON.parse(text) as { message?: unknown }).message;
    return typeof message === 'string' && message ? message : null;
  } catch {
    return null;
  }
}

function serverMissing(status: number, text: string): string {
  return status === 404
    ? 'The jupyter-tracejit server extension is not enabled on this Jupyter server: ' +
        'run `jupyter server extension enable jupyter_tracejit.server` and restart it.'
    : `The Jupyter server answered ${status}: ${text.slice(0, 500)}`;
}
