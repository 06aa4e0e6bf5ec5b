import { describe, expect, it } from 'vitest';

import { TRAIT_DEFAULTS } from '../src/model/protocol';
import { AnyModel, AnyModelAdapter, SYNCED_TRAITS } from '../src/state/anymodel';
import { WidgetHost } from '../src/state/host';

/** anywidget's model as its hosts implement it: get/set per key, `change:<key>` events, no Backbone. */
class FakeAnyModel implements AnyModel {
  state: Record<string, unknown> = structuredClone(TRAIT_DEFAULTS) as Record<string, unknown>;
  listeners = new Map<string, Set<(...args: unknown[]) => void>>();
  saved = 0;
  sent: unknown[] = [];

  get(key: string): unknown {
    return this.state[key];
  }
  set(key: string, value: unknown): void {
    this.state[key] = value;
    this.listeners.get(`change:${key}`)?.forEach(cb => cb());
  }
  save_changes(): void {
    this.saved += 1;
  }
  send(content: unknown): void {
    this.sent.push(content);
  }
  on(event: string, cb: (...args: unknown[]) => void): void {
    (this.listeners.get(event) ?? this.listeners.set(event, new Set()).get(event)!).add(cb);
  }
  off(event?: string | null, cb?: ((...args: unknown[]) => void) | null): void {
    if (event && cb) {
      this.listeners.get(event)?.delete(cb);
    }
  }
  listenerCount(): number {
    return [...this.listeners.values()].reduce((n, s) => n + s.size, 0);
  }
}

describe('AnyModelAdapter: anywidget model as the WidgetHost model', () => {
  it('listens to every synced trait of the contract', () => {
    const model = new FakeAnyModel();
    new AnyModelAdapter(model);
    expect(SYNCED_TRAITS).toContain('run_json');
    expect(SYNCED_TRAITS).toContain('selected_node');
    for (const trait of SYNCED_TRAITS) {
      expect(model.listeners.get(`change:${trait}`)?.size).toBe(1);
    }
  });

  it('reports a kernel update of several traits as one change with the host keys', async () => {
    const model = new FakeAnyModel();
    const host = new WidgetHost(new AnyModelAdapter(model));
    const seen: string[][] = [];
    host.onChange(keys => seen.push([...keys].sort()));
    model.set('status', 'tracing');
    model.set('status_since', 12);
    model.set('selected_node', 3);
    expect(seen).toEqual([]); // delivered after the task, together
    await Promise.resolve();
    expect(seen).toEqual([['selectedNode', 'status', 'statusSince']]);
    expect(host.get('selectedNode')).toBe(3);
  });

  it('writes a patch trait by trait, saves once, sends messages', () => {
    const model = new FakeAnyModel();
    const flushes: (() => void)[] = [];
    const host = new WidgetHost(new AnyModelAdapter(model, SYNCED_TRAITS, f => flushes.push(f)));
    model.state.options = { strict: true, check_trace: true };
    host.set({ selectedNode: 5, options: { check_trace: false } });
    expect(model.state.selected_node).toBe(5);
    expect(model.state.options).toEqual({ strict: true, check_trace: false }); // merged, as for ipywidgets
    expect(model.saved).toBe(1);
    expect(flushes.length).toBe(1);
    host.send({ type: 'retrace' });
    expect(model.sent).toEqual([{ type: 'retrace' }]);
  });

  it('lets go of the model when disposed', () => {
    const model = new FakeAnyModel();
    const adapter = new AnyModelAdapter(model);
    const host = new WidgetHost(adapter);
    host.dispose();
    adapter.dispose();
    expect(model.listenerCount()).toBe(0);
  });
});
