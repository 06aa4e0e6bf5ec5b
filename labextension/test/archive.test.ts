/**
 * A `.pt` opened in JupyterLab asks the server extension for its run (archive/fetch.ts): a POST under the server's
 * base URL whose JSON body names the file relative to the root dir (a GET is refused by the server: a link or
 * another site could send one), and a refusal becomes an error carrying the server's message, or saying the
 * extension is missing when the route is not there.
 */
import { ServerConnection } from '@jupyterlab/services';
import { describe, expect, it } from 'vitest';

import { fetchRun, OPEN_ROUTE } from '../src/archive/fetch';
import { isModuleName, unregisteredModule } from '../src/archive/imports';

interface Sent {
  url: string;
  method: string;
  body: string;
  xsrf: string | null;
}

function server(status: number, body: string): { settings: ServerConnection.ISettings; sent: Sent[] } {
  const sent: Sent[] = [];
  const fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = input instanceof Request ? input : new Request(String(input), init);
    sent.push({
      url: request.url,
      method: request.method,
      body: await request.text(),
      xsrf: request.headers.get('X-XSRFToken')
    });
    return new Response(body, { status });
  };
  const settings = ServerConnection.makeSettings({
    baseUrl: 'http://127.0.0.1:8888/user/me/',
    wsUrl: 'ws://127.0.0.1:8888/user/me/',
    token: '',
    fetch: fetch as typeof globalThis.fetch
  });
  return { settings, sent };
}

describe('fetchRun', () => {
  it("posts the file's path under the base URL, with the XSRF token, and answers the run text as sent", async () => {
    // the page's XSRF cookie, as jupyter_server sets it (a node test has no document of its own)
    const { settings, sent } = server(200, '{"kind": "jupyter-tracejit.run"}');
    const page = globalThis as { document?: unknown };
    page.document = { cookie: '_xsrf=the-token' };
    try {
      expect(await fetchRun('models/my model.pt', settings)).toBe('{"kind": "jupyter-tracejit.run"}');
    } finally {
      delete page.document;
    }
    expect(sent).toHaveLength(1);
    const url = new URL(sent[0].url);
    expect(url.pathname).toBe(`/user/me/${OPEN_ROUTE}`);
    expect(url.searchParams.get('path')).toBeNull(); // in the body: a URL is what a link could carry
    expect(sent[0].method).toBe('POST');
    expect(JSON.parse(sent[0].body)).toEqual({ path: 'models/my model.pt' });
    expect(sent[0].xsrf).toBe('the-token');
  });

  it("throws the server's busy answer with its message", async () => {
    const message = 'The trace explorer is reading 2 files already (its limit at once): try again in a moment.';
    const { settings } = server(503, JSON.stringify({ message }));
    await expect(fetchRun('model.pt', settings)).rejects.toThrow(message);
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

  it('sends the modules to import first only when there are some', async () => {
    const { settings, sent } = server(200, '{}');
    await fetchRun('bert.pt2', settings, undefined, ['transformers.modeling_outputs']);
    await fetchRun('bert.pt2', settings);
    expect(JSON.parse(sent[0].body)).toEqual({ path: 'bert.pt2', imports: ['transformers.modeling_outputs'] });
    expect(JSON.parse(sent[1].body)).toEqual({ path: 'bert.pt2' });
  });
});

describe('unregisteredModule', () => {
  const failed = (tag: string, message: string): string => JSON.stringify({ kind: 'run', error: { tag, message } });
  const torchSays = (cls: string): string =>
    `torch.export.load could not read bert.pt2: Deserializing ${cls} in pytree is not registered. Please register`;

  it('is the module of the class torch names, for a run whose load failed on it', () => {
    const run = failed('unregistered_pytree', torchSays('transformers.modeling_outputs.BaseModelOutput'));
    expect(unregisteredModule(run)).toBe('transformers.modeling_outputs');
  });

  it('is null for another failure, a class with no module, or a name the server would not import', () => {
    expect(unregisteredModule(failed('corrupt_archive', torchSays('a.B')))).toBeNull();
    expect(unregisteredModule(failed('unregistered_pytree', torchSays('Pair')))).toBeNull();
    expect(unregisteredModule(failed('unregistered_pytree', 'no class named'))).toBeNull();
    expect(unregisteredModule('{"error": null, "note": "unregistered_pytree"}')).toBeNull();
    expect(unregisteredModule('not json unregistered_pytree')).toBeNull();
    expect(unregisteredModule(JSON.stringify({ error: null }))).toBeNull();
  });

  it('accepts dotted identifiers only, as the server does', () => {
    expect(isModuleName('transformers.modeling_outputs')).toBe(true);
    expect(isModuleName('_private.mod2')).toBe(true);
    for (const bad of ['', 'a..b', '.a', 'a.', '1a', 'os; rm', '../x', 'a b', 'a-b']) {
      expect(isModuleName(bad)).toBe(false);
    }
  });
});
