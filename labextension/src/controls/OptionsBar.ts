/**
 * The options bar of a live explorer: the options of the run's back end (its registry row's: for a trace strict,
 * check_trace, tolerance, which check inputs are on, force_outplace, module mode, no_grad, the target device; for
 * an export strict, draft, module mode and no_grad, with its dynamic_shapes and check_inputs shown read-only, as a
 * re-export keeps them), a re-capture button, the status and the run history. Changing an option captures again
 * in the kernel (debounced there); a read-only explorer shows the options of the saved run instead.
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
import { backendOf, barOptions } from '../model/backends';
import { HistoryEntry } from '../model/protocol';
import { AnyOptions, historyLabel, savedOptionsText } from '../model/history';
import { ControlHost, OptionValues, optionControls, readOnlyOptions } from './optionControls';

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
  private pending(key: string, index = -1): boolean {
    const options = this.ctx.host.get('options') as OptionValues | null;
    const applied = this.applied as OptionValues | null;
    if (!options || !applied || !(key in options) || !(key in applied)) {
      return false;
    }
    if (index >= 0) {
      const now = (options[key] as boolean[] | undefined)?.[index] ?? true;
      return now !== ((applied[key] as boolean[] | undefined)?.[index] ?? true);
    }
    return JSON.stringify(options[key]) !== JSON.stringify(applied[key]);
  }

  private get anyPending(): boolean {
    return barOptions(this.ctx.run?.raw)
      .filter(spec => !spec.read_only)
      .some(spec =>
        spec.control === 'input_sets'
          ? this.ctx.host.get('checkInputLabels').some((_l, i) => this.pending(spec.key, i))
          : this.pending(spec.key)
      );
  }

  private set(patch: OptionValues): void {
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
    const row = backendOf(this.ctx.run?.raw);
    if (!live || !options) {
      // a saved run: the options it was captured with, by the names the options bar uses
      append(
        this.controls,
        h(
          'span',
          { class: 'jp-TraceExplorer-muted', title: `a saved ${row.noun} cannot be ${row.past} again` },
          savedOptionsText(this.ctx.run?.raw)
        )
      );
      return;
    }
    const bar: ControlHost = {
      set: patch => this.set(patch),
      pending: (key, index) => this.pending(key, index),
      checkInputLabels: host.get('checkInputLabels')
    };
    // one control per option, in the order and with the labels of the back end's one definition (its options
    // table); the options a re-capture keeps are shown, not changed
    const specs = barOptions(this.ctx.run?.raw);
    append(
      this.controls,
      ...specs.filter(spec => !spec.read_only).flatMap(spec => optionControls(spec, options as OptionValues, bar)),
      ...readOnlyOptions(
        specs.filter(spec => spec.read_only),
        this.ctx.run?.raw
      ),
      button(`re-${row.verb}`, () => this.retrace(), {
        class: 'jp-TraceExplorer-button jp-mod-accept',
        'data-action': 'retrace',
        title: `${row.verb} again now with these options`
      })
    );
    if (focusKey) {
      const selector = focusKey.startsWith('check:')
        ? `[data-check-input="${focusKey.slice(6)}"]`
        : `[data-option="${CSS.escape(focusKey)}"]`;
      (this.controls.querySelector(selector) as HTMLElement | null)?.focus();
    }
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
    const row = backendOf(this.ctx.run?.raw);
    let text: ((elapsed: number) => string) | null = null;
    let since = 0;
    let mode: string = state;
    if (state === 'tracing') {
      // mounted while the kernel was already tracing: only its clock knows since when
      since = this.tracingSince ?? host.get('statusSince');
      // what the kernel says it does now (exporting, checking, draft-exporting), else the back end's word
      const doing = host.get('phase') || row.doing;
      text = elapsed => `${doing}… ${elapsed.toFixed(1)} s`;
    } else if (waiting.kind === 'asked' && (waiting.retrace || this.anyPending)) {
      since = waiting.since;
      mode = 'tracing';
      text = elapsed => `re-${row.verb} asked… ${elapsed.toFixed(1)} s`;
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
