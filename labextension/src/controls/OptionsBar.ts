/**
 * The options bar of a live explorer: strict, check_trace, tolerance, which check inputs are on,
 * force_outplace, module mode, no_grad, a re-trace button, the status ("tracing… 3.2 s", or the
 * last error) and the run history to switch between runs. Changing an option re-traces in the
 * kernel (debounced there); a read-only explorer shows the options of the saved run instead.
 */

import { ExplorerContext } from '../state/context';
import { append, button, clear, h } from '../state/dom';
import { ExplorerOptions, OPTION_SPECS } from '../model/protocol';

type OptionSpec = (typeof OPTION_SPECS)[number];

/** How the module modes read in the menu. */
const MODE_LABELS: Record<ExplorerOptions['module_mode'], string> = {
  as_is: 'mode as is',
  eval: 'eval()',
  train: 'train()'
};

export class OptionsBar {
  readonly element: HTMLElement;
  private readonly statusEl: HTMLElement;
  private readonly controls: HTMLElement;
  private readonly historyEl: HTMLElement;
  private timer: number | null = null;
  private readonly unsubscribe: () => void;

  constructor(private readonly ctx: ExplorerContext) {
    this.controls = h('div', { class: 'jp-TraceExplorer-options', role: 'group', 'aria-label': 'trace options' });
    this.statusEl = h('div', { class: 'jp-TraceExplorer-status', role: 'status', 'aria-live': 'polite' });
    this.historyEl = h('div', { class: 'jp-TraceExplorer-history' });
    this.element = h('div', { class: 'jp-TraceExplorer-optionsBar' }, this.controls, this.historyEl, this.statusEl);
    this.unsubscribe = ctx.onChange(keys => {
      if (keys.has('options') || keys.has('live') || keys.has('checkInputLabels') || keys.has('run')) {
        this.renderControls();
      }
      if (keys.has('history') || keys.has('run')) {
        this.renderHistory();
      }
      if (keys.has('status') || keys.has('statusSince') || keys.has('statusMessage')) {
        this.renderStatus();
      }
    });
    this.renderControls();
    this.renderHistory();
    this.renderStatus();
  }

  dispose(): void {
    this.unsubscribe();
    if (this.timer !== null) {
      window.clearInterval(this.timer);
    }
  }

  private set(patch: Partial<ExplorerOptions>): void {
    this.ctx.host.set({ options: { ...(this.ctx.host.get('options') as ExplorerOptions), ...patch } });
  }

  private renderControls(): void {
    clear(this.controls);
    const host = this.ctx.host;
    const options = host.get('options');
    const live = host.get('live') && !host.readOnly && options !== null;
    if (!live || !options) {
      // a saved run: the options it was traced with, by the names the options bar uses
      const saved = (this.ctx.run?.raw.options ?? {}) as Record<string, unknown>;
      const shown = OPTION_SPECS.filter(spec => spec.key in saved)
        .map(spec => `${spec.label}=${JSON.stringify(saved[spec.key])}`)
        .join('  ');
      append(
        this.controls,
        h(
          'span',
          { class: 'jp-TraceExplorer-muted', title: 'a saved trace cannot be re-traced' },
          `read-only · ${shown}`
        )
      );
      return;
    }
    // one control per option, in the order and with the labels of the one definition (core/options.py)
    const controls = OPTION_SPECS.map(spec => this.control(spec, options));
    append(
      this.controls,
      ...controls.flat(),
      button('re-trace', () => host.send({ type: 'retrace' }), {
        class: 'jp-TraceExplorer-button jp-mod-accept',
        title: 're-trace now with these options'
      })
    );
  }

  private control(spec: OptionSpec, options: ExplorerOptions): HTMLElement[] {
    const key = spec.key;
    if (key === 'check_inputs_enabled') {
      return this.ctx.host.get('checkInputLabels').map((label, i) => {
        const box = h('input', {
          type: 'checkbox',
          checked: options.check_inputs_enabled[i] ?? true,
          'data-check-input': i
        });
        box.addEventListener('change', () => {
          const next = [...options.check_inputs_enabled];
          next[i] = box.checked;
          this.set({ check_inputs_enabled: next });
        });
        return h(
          'label',
          { class: 'jp-TraceExplorer-toggle jp-TraceExplorer-chip', title: `${spec.description}: ${label}` },
          box,
          label.split(':')[0]
        );
      });
    }
    if (key === 'check_tolerance') {
      const tol = h('input', {
        type: 'number',
        min: 0,
        step: 'any',
        value: String(options.check_tolerance),
        class: 'jp-TraceExplorer-tolerance',
        'data-option': key,
        'aria-label': spec.description
      });
      tol.addEventListener('change', () => {
        const value = Number(tol.value);
        if (tol.value.trim() !== '' && Number.isFinite(value) && value >= 0) {
          tol.setCustomValidity('');
          this.set({ check_tolerance: value });
        } else {
          tol.setCustomValidity(`${spec.label} must be a number >= 0`);
          tol.reportValidity();
        }
      });
      return [h('label', { class: 'jp-TraceExplorer-toggle', title: spec.description }, `${spec.label} `, tol)];
    }
    if (key === 'module_mode') {
      const mode = h('select', { 'data-option': key, 'aria-label': spec.description, title: spec.description });
      for (const value of spec.choices) {
        mode.appendChild(h('option', { value, selected: options.module_mode === value }, MODE_LABELS[value]));
      }
      mode.addEventListener('change', () => this.set({ module_mode: mode.value as ExplorerOptions['module_mode'] }));
      return [mode];
    }
    const box = h('input', { type: 'checkbox', checked: options[key], 'data-option': key });
    box.addEventListener('change', () => this.set({ [key]: box.checked }));
    return [h('label', { class: 'jp-TraceExplorer-toggle', title: spec.description }, box, spec.label)];
  }

  private renderHistory(): void {
    clear(this.historyEl);
    const history = this.ctx.host.get('history');
    if (history.length < 2 || this.ctx.host.readOnly) {
      return;
    }
    const current = this.ctx.run?.runId;
    const select = h('select', { 'aria-label': 'run history' });
    history.forEach((e, i) =>
      select.appendChild(
        h(
          'option',
          { value: e.run_id, selected: e.run_id === current },
          `run ${i + 1}: ${e.ok ? 'ok' : 'problems'} · ${e.summary.slice(0, 70)}`
        )
      )
    );
    select.addEventListener('change', () => this.ctx.host.send({ type: 'show_run', run_id: select.value }));
    append(this.historyEl, h('label', {}, 'history ', select));
  }

  private renderStatus(): void {
    const host = this.ctx.host;
    const state = host.get('status');
    if (this.timer !== null) {
      window.clearInterval(this.timer);
      this.timer = null;
    }
    this.statusEl.className = `jp-TraceExplorer-status jp-mod-${state}`;
    if (state === 'tracing') {
      const since = host.get('statusSince');
      const tick = (): void => {
        const elapsed = since > 0 ? Math.max(0, Date.now() / 1000 - since) : 0;
        this.statusEl.textContent = `tracing… ${elapsed.toFixed(1)} s`;
      };
      tick();
      this.timer = window.setInterval(tick, 100);
    } else if (state === 'error') {
      this.statusEl.textContent = host.get('statusMessage') || 'error';
    } else {
      this.statusEl.textContent = '';
    }
  }
}
