/**
 * The options bar of a live explorer: strict, check_trace, tolerance, which check inputs are on, force_outplace,
 * module mode, no_grad, the target device, a re-trace button, the status and the run history. Changing an option re-traces in the
 * kernel (debounced there); a read-only explorer shows the options of the saved run instead. An export run's bar is
 * the export's (EXPORT_OPTION_SPECS: strict, draft, module mode, no_grad) with its dynamic_shapes and check_inputs
 * shown read-only (a re-export keeps them) and a re-export button.
 *
 * Every click shows at once what it did, before the kernel answers: a control whose value is not yet the one the
 * run on screen was traced with is marked pending, and the status counts the seconds ("re-trace asked… 0.4 s",
 * then "tracing… 3.2 s", counted from the click on this page's clock, so a kernel whose clock differs cannot skew
 * it) with a cancel button. Cancel stops waiting: the kernel drops
 * the result when it comes and puts the options of the run on screen back. Picking a run of the history shows it
 * and puts its options in the bar (the kernel does that), so they are the options of the next re-trace.
 */

import { ExplorerContext } from '../state/context';
import { append, button, clear, h } from '../state/dom';
import {
  EXPORT_OPTION_SPECS,
  EXPORT_READ_ONLY_OPTIONS,
  ExplorerOptions,
  ExportExplorerOptions,
  HistoryEntry,
  OPTION_SPECS
} from '../model/protocol';
import { AnyOptions, historyLabel, isExportOptions, savedOptionsText } from '../model/history';

type OptionSpec = (typeof OPTION_SPECS)[number];
type ExportOptionSpec = (typeof EXPORT_OPTION_SPECS)[number];
type OptionKey = OptionSpec['key'] | ExportOptionSpec['key'];

/** How the draft_export choices read in the menu. */
const DRAFT_LABELS: Record<ExportExplorerOptions['draft'], string> = {
  on_request: 'draft on request',
  on_failure: 'draft on failure',
  always: 'draft always',
  never: 'no draft'
};

/** How the module modes read in the menu. */
const MODE_LABELS: Record<ExplorerOptions['module_mode'], string> = {
  as_is: 'mode as is',
  eval: 'eval()',
  train: 'train()'
};

/** What the bar is waiting for, as the front end knows it before the kernel says so. */
/** How long "cancelled" stays in the status line once the kernel is done with the trace. */
const CANCELLED_SHOWN_MS = 3000;

type Waiting =
  | { kind: 'none' }
  /** options changed (`retrace` false) or re-trace clicked here; the kernel has not started tracing yet */
  | { kind: 'asked'; since: number; retrace: boolean }
  /** a run of the history was picked */
  | { kind: 'switching'; runId: string; since: number }
  /** cancel clicked: the kernel will drop the result */
  | { kind: 'cancelled' };

export class OptionsBar {
  readonly element: HTMLElement;
  private readonly statusEl: HTMLElement;
  private readonly controls: HTMLElement;
  private readonly historyEl: HTMLElement;
  private timer: number | null = null;
  private waiting: Waiting = { kind: 'none' };
  /** When this page saw the trace begin (its click, else the kernel's "tracing"); null when not tracing. */
  private tracingSince: number | null = null;
  private readonly unsubscribe: () => void;
  private cancelTimer = 0;

  constructor(private readonly ctx: ExplorerContext) {
    this.controls = h('div', { class: 'jp-TraceExplorer-options', role: 'group', 'aria-label': 'trace options' });
    this.statusEl = h('div', { class: 'jp-TraceExplorer-status', role: 'status', 'aria-live': 'polite' });
    this.historyEl = h('div', { class: 'jp-TraceExplorer-history' });
    this.element = h('div', { class: 'jp-TraceExplorer-optionsBar' }, this.controls, this.historyEl, this.statusEl);
    this.unsubscribe = ctx.onChange(keys => {
      if (keys.has('status')) {
        const asked = this.waiting.kind === 'asked' ? this.waiting.since : null;
        this.tracingSince = ctx.host.get('status') === 'tracing' ? (asked ?? Date.now() / 1000) : null;
      }
      if (keys.has('status') && ctx.host.get('status') !== 'idle' && this.waiting.kind !== 'cancelled') {
        this.waiting = { kind: 'none' }; // the kernel took over: its status says the rest
      }
      if (keys.has('status') && ctx.host.get('status') !== 'tracing' && this.waiting.kind === 'cancelled') {
        this.forgetCancel(); // the kernel is done with the cancelled trace: say so a moment, then nothing
      }
      if (keys.has('run')) {
        this.waiting = { kind: 'none' };
      }
      if (
        keys.has('options') ||
        keys.has('live') ||
        keys.has('checkInputLabels') ||
        keys.has('run') ||
        keys.has('history')
      ) {
        this.renderControls();
      }
      if (keys.has('history') || keys.has('run')) {
        this.renderHistory();
      }
      this.renderStatus();
    });
    this.renderControls();
    this.renderHistory();
    this.renderStatus();
  }

  dispose(): void {
    this.unsubscribe();
    this.stopTimer();
    window.clearTimeout(this.cancelTimer);
  }

  /** Clear the "cancelled" status a moment after the kernel is done with the trace it stopped. */
  private forgetCancel(): void {
    window.clearTimeout(this.cancelTimer);
    this.cancelTimer = window.setTimeout(() => {
      if (this.waiting.kind === 'cancelled' && this.ctx.host.get('status') !== 'tracing') {
        this.waiting = { kind: 'none' };
        this.renderStatus();
      }
    }, CANCELLED_SHOWN_MS);
  }

  /** The options bar values the run on screen was traced with (null when the kernel did not say). */
  private get applied(): AnyOptions | null {
    const runId = this.ctx.run?.runId;
    const entry = this.ctx.host.get('history').find((e: HistoryEntry) => e.run_id === runId);
    return entry?.explorer_options ?? null;
  }

  /** Whether option `key` (item `index` of the check input switches) differs from the run on screen. */
  private pending(key: OptionKey, index = -1): boolean {
    const options = this.ctx.host.get('options');
    const applied = this.applied;
    if (!options || !applied) {
      return false;
    }
    if (key === 'check_inputs_enabled') {
      if (isExportOptions(options) || isExportOptions(applied)) {
        return false;
      }
      return (options.check_inputs_enabled[index] ?? true) !== (applied.check_inputs_enabled[index] ?? true);
    }
    return (
      (options as unknown as Record<string, unknown>)[key] !== (applied as unknown as Record<string, unknown>)[key]
    );
  }

  private get anyPending(): boolean {
    const options = this.ctx.host.get('options');
    if (options && isExportOptions(options)) {
      return EXPORT_OPTION_SPECS.some(spec => this.pending(spec.key));
    }
    return OPTION_SPECS.some(spec =>
      spec.key === 'check_inputs_enabled'
        ? this.ctx.host.get('checkInputLabels').some((_l, i) => this.pending(spec.key, i))
        : this.pending(spec.key)
    );
  }

  private set(patch: Partial<ExplorerOptions> | Partial<ExportExplorerOptions>): void {
    this.waiting = { kind: 'asked', since: Date.now() / 1000, retrace: false };
    this.ctx.host.set({ options: { ...this.ctx.host.get('options'), ...patch } as AnyOptions });
    this.renderStatus(); // also when the change event came first (the control is re-rendered by it)
  }

  private retrace(): void {
    this.waiting = { kind: 'asked', since: Date.now() / 1000, retrace: true };
    this.ctx.host.send({ type: 'retrace' });
    this.renderStatus();
  }

  private cancel(): void {
    const host = this.ctx.host;
    this.waiting = { kind: 'cancelled' };
    host.send({ type: 'cancel' });
    if (host.get('status') === 'tracing') {
      // the kernel is blocked in this trace and reads the cancel only after it: interrupt it (the explorer
      // makes its re-trace interruptible), so a minute-long trace stops now; the cancel then drops it
      host.interruptKernel?.();
    } else {
      this.forgetCancel(); // the kernel may never start it: no status change would clear the line
    }
    this.renderStatus();
  }

  private renderControls(): void {
    // re-rendering replaces the inputs: keep the keyboard focus on the same control
    const focused = document.activeElement;
    const focusKey =
      focused instanceof HTMLElement && this.controls.contains(focused)
        ? (focused.dataset.option ?? (focused.dataset.checkInput ? `check:${focused.dataset.checkInput}` : null))
        : null;
    clear(this.controls);
    const host = this.ctx.host;
    const options = host.get('options');
    const live = host.get('live') && !host.readOnly && options !== null;
    const exportRun = this.ctx.run?.raw.backend === 'export';
    if (!live || !options) {
      // a saved run: the options it was traced with, by the names the options bar uses
      append(
        this.controls,
        h(
          'span',
          {
            class: 'jp-TraceExplorer-muted',
            title: exportRun ? 'a saved export cannot be exported again' : 'a saved trace cannot be re-traced'
          },
          savedOptionsText(this.ctx.run?.raw)
        )
      );
      return;
    }
    if (isExportOptions(options)) {
      // an export run: the export's options (core/export/options.py EXPORT_SPECS), and those a re-export keeps
      append(
        this.controls,
        ...EXPORT_OPTION_SPECS.map(spec => this.exportControl(spec, options)),
        ...this.readOnlyExportOptions(),
        button('re-export', () => this.retrace(), {
          class: 'jp-TraceExplorer-button jp-mod-accept',
          'data-action': 'retrace',
          title: 'export again now with these options'
        })
      );
    } else {
      // one control per option, in the order and with the labels of the one definition (core/options.py)
      const controls = OPTION_SPECS.map(spec => this.control(spec, options));
      append(
        this.controls,
        ...controls.flat(),
        button('re-trace', () => this.retrace(), {
          class: 'jp-TraceExplorer-button jp-mod-accept',
          'data-action': 'retrace',
          title: 're-trace now with these options'
        })
      );
    }
    if (focusKey) {
      const selector = focusKey.startsWith('check:')
        ? `[data-check-input="${focusKey.slice(6)}"]`
        : `[data-option="${CSS.escape(focusKey)}"]`;
      (this.controls.querySelector(selector) as HTMLElement | null)?.focus();
    }
  }

  /** A control's wrapper, marked pending while its value is not the one the run on screen was traced with. */
  private wrap(label: HTMLElement, pending: boolean, description: string): HTMLElement {
    label.classList.toggle('jp-mod-pending', pending);
    label.title = pending ? `${description} (changed: not yet traced with this value)` : description;
    return label;
  }

  /** One control of an export run's bar: a menu for draft and the module mode, a checkbox otherwise. */
  private exportControl(spec: ExportOptionSpec, options: ExportExplorerOptions): HTMLElement {
    const key = spec.key;
    if (key === 'draft' || key === 'module_mode') {
      const labels: Record<string, string> = key === 'draft' ? DRAFT_LABELS : MODE_LABELS;
      const menu = h('select', { 'data-option': key, 'aria-label': spec.description });
      for (const value of spec.choices) {
        menu.appendChild(h('option', { value, selected: options[key] === value }, labels[value]));
      }
      menu.addEventListener('change', () => this.set({ [key]: menu.value }));
      return this.wrap(h('label', { class: 'jp-TraceExplorer-toggle' }, menu), this.pending(key), spec.description);
    }
    const box = h('input', { type: 'checkbox', checked: options[key], 'data-option': key });
    box.addEventListener('change', () => this.set({ [key]: box.checked }));
    return this.wrap(
      h('label', { class: 'jp-TraceExplorer-toggle' }, box, spec.label),
      this.pending(key),
      spec.description
    );
  }

  /** dynamic_shapes and check_inputs of an export run: shown, not changed (a re-export keeps the request's). */
  private readOnlyExportOptions(): HTMLElement[] {
    const saved = (this.ctx.run?.raw.options ?? {}) as Record<string, unknown>;
    return EXPORT_READ_ONLY_OPTIONS.filter(spec => saved[spec.key] !== null && saved[spec.key] !== undefined).map(
      spec => {
        const value = saved[spec.key];
        const text = typeof value === 'string' ? value : JSON.stringify(value);
        return h(
          'span',
          {
            class: 'jp-TraceExplorer-toggle jp-TraceExplorer-muted jp-TraceExplorer-readOnlyOption',
            'data-read-only-option': spec.key,
            title: `${spec.description} (read-only here)`
          },
          `${spec.label}=${text}`
        );
      }
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
        return this.wrap(
          h('label', { class: 'jp-TraceExplorer-toggle jp-TraceExplorer-chip' }, box, label.split(':')[0]),
          this.pending(key, i),
          `${spec.description}: ${label}`
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
      return [
        this.wrap(
          h('label', { class: 'jp-TraceExplorer-toggle' }, `${spec.label} `, tol),
          this.pending(key),
          spec.description
        )
      ];
    }
    if (key === 'module_mode') {
      const mode = h('select', { 'data-option': key, 'aria-label': spec.description });
      for (const value of spec.choices) {
        mode.appendChild(h('option', { value, selected: options.module_mode === value }, MODE_LABELS[value]));
      }
      mode.addEventListener('change', () => this.set({ module_mode: mode.value as ExplorerOptions['module_mode'] }));
      return [this.wrap(h('label', { class: 'jp-TraceExplorer-toggle' }, mode), this.pending(key), spec.description)];
    }
    if (key === 'target_device') {
      // free text (any device torch names: "cuda", "cuda:1", "mps"), the common ones offered; empty: where it is
      // traced. The kernel validates it with the option's one definition and says why in the status when it is not
      const device = h('input', {
        type: 'text',
        value: options.target_device ?? '',
        placeholder: 'as traced',
        size: 7,
        list: 'jp-TraceExplorer-devices',
        class: 'jp-TraceExplorer-device',
        'data-option': key,
        'aria-label': spec.description
      });
      device.addEventListener('change', () => this.set({ target_device: device.value.trim() || null }));
      const devices = h(
        'datalist',
        { id: 'jp-TraceExplorer-devices' },
        ...['cpu', 'cuda', 'cuda:0', 'mps'].map(d => h('option', { value: d }))
      );
      return [
        this.wrap(
          h('label', { class: 'jp-TraceExplorer-toggle' }, `${spec.label} `, device, devices),
          this.pending(key),
          spec.description
        )
      ];
    }
    const box = h('input', { type: 'checkbox', checked: options[key], 'data-option': key });
    box.addEventListener('change', () => this.set({ [key]: box.checked }));
    return [
      this.wrap(h('label', { class: 'jp-TraceExplorer-toggle' }, box, spec.label), this.pending(key), spec.description)
    ];
  }

  private renderHistory(): void {
    clear(this.historyEl);
    const history = this.ctx.host.get('history');
    if (history.length < 2 || this.ctx.host.readOnly) {
      return;
    }
    const current = this.ctx.run?.runId;
    const select = h('select', { 'aria-label': 'run history' });
    history.forEach((e, i) => {
      select.appendChild(h('option', { value: e.run_id, selected: e.run_id === current }, historyLabel(history, i)));
    });
    select.addEventListener('change', () => {
      this.waiting = { kind: 'switching', runId: select.value, since: Date.now() / 1000 };
      this.ctx.host.send({ type: 'show_run', run_id: select.value });
      this.renderStatus();
    });
    append(this.historyEl, h('label', {}, 'history ', select));
  }

  private stopTimer(): void {
    if (this.timer !== null) {
      window.clearInterval(this.timer);
      this.timer = null;
    }
  }

  /** The status line: what the kernel is doing or what the bar waits for, counting seconds, with cancel. */
  private renderStatus(): void {
    const host = this.ctx.host;
    const state = host.get('status');
    this.stopTimer();
    clear(this.statusEl);
    if (!host.get('live') || host.readOnly) {
      this.statusEl.className = 'jp-TraceExplorer-status';
      return;
    }
    const waiting = this.waiting;
    if (waiting.kind === 'cancelled') {
      // the kernel may still be busy with the trace (it reads the cancel when it is done, and drops the result)
      this.statusEl.className = 'jp-TraceExplorer-status jp-mod-cancelled';
      append(
        this.statusEl,
        state === 'tracing' ? 'cancelled: stopping the trace…' : 'cancelled: the run before is on screen'
      );
      return;
    }
    const exporting = this.ctx.run?.raw.backend === 'export';
    let text: ((elapsed: number) => string) | null = null;
    let since = 0;
    let mode: string = state;
    if (state === 'tracing') {
      // mounted while the kernel was already tracing: only its clock knows since when
      since = this.tracingSince ?? host.get('statusSince');
      text = elapsed => `${exporting ? 'exporting' : 'tracing'}… ${elapsed.toFixed(1)} s`;
    } else if (waiting.kind === 'asked' && (waiting.retrace || this.anyPending)) {
      since = waiting.since;
      mode = 'tracing';
      text = elapsed => `${exporting ? 're-export' : 're-trace'} asked… ${elapsed.toFixed(1)} s`;
    } else if (waiting.kind === 'switching') {
      since = waiting.since;
      mode = 'tracing';
      text = () => 'showing the run…';
    }
    this.statusEl.className = `jp-TraceExplorer-status jp-mod-${mode}`;
    if (text !== null) {
      const label = h('span', { class: 'jp-TraceExplorer-statusText' });
      const format = text;
      const tick = (): void => {
        const elapsed = since > 0 ? Math.max(0, Date.now() / 1000 - since) : 0;
        label.textContent = format(elapsed);
      };
      tick();
      this.timer = window.setInterval(tick, 100);
      append(
        this.statusEl,
        label,
        waiting.kind === 'switching'
          ? null
          : button('cancel', () => this.cancel(), {
              class: 'jp-TraceExplorer-button jp-TraceExplorer-cancel',
              title: 'stop this re-trace (interrupts the kernel while it traces); the options go back to the run shown'
            })
      );
    } else if (state === 'error') {
      append(this.statusEl, host.get('statusMessage') || 'error');
    }
  }
}
