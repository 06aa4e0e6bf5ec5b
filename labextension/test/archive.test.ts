/**
 * A `.pt` opened in JupyterLab asks the server extension for its run (archive/fetch.ts): the request names the
 * file relative to the root dir under the server's base URL, and a refusal becomes an error carrying the server's
 * message, or saying the extension is missing when the route is not there.
 */
import { ServerConnection } from '@jupyterlab/services';
import { describe, expect, it } from 'vitest';

import { fetchRun, OPEN_ROUTE } from '../src/archive/fetch';

function server(status: number, body: string): { settings: ServerConnection.ISettings; urls: string[] } {
  const urls: string[] = [];
  const fetch = async (input: RequestInfo | URL): Promise<Response> => {
    urls.push(input instanceof Request ? input.url : String(input));
    return new Response(body, { status });
  };
  const settings = ServerConnection.makeSettings({
    baseUrl: 'http://127.0.0.1:8888/user/me/',
    wsUrl: 'ws://127.0.0.1:8888/user/me/',
    token: '',
    fetch: fetch as typeof globalThis.fetch
  });
  return { settings, urls };
}

describe('fetchRun', () => {
  it('asks for the file by its path under the base URL and answers the run text as sent', async () => {
    const { settings, urls } = server(200, '{"kind": "jupyter-tracejit.run"}');
    expect(await fetchRun('models/my model.pt', settings)).toBe('{"kind": "jupyter-tracejit.run"}');
    expect(urls).toHaveLength(1);
    const url = new URL(urls[0]);
    expect(url.pathname).toBe(`/user/me/${OPEN_ROUTE}`);
    expect(url.searchParams.get('path')).toBe('models/my model.pt');
  });

  it("throws the server's message when it refuses the file", async () => {
    const message = "big.pt is 3 GiB, over the trace explorer's limit of 2 GiB (2147483648 bytes). ...";
    const { settings } = server(413, JSON.stringify({ message }));
    await expect(fetchRun('big.pt', settings)).rejects.toThrow(message);
  });

  it('says the server extension is not enabled when its route is not found', async () => {
    const { settings } = server(404, '<html>404: Not Found</html>');
    await expect(fetchRun('model.pt', settings)).rejects.toThrow(
      'jupyter server extension enable jupyter_tracejit.server'
    );
  });
});
