/**
 * The options bar's controls, one per option of the run's back end (its registry row's `options`, model/backends.ts
 * `barOptions`): a checkbox, a menu, a number, a device, a switch per check input set; the options a re-capture
 * keeps shown read-only. Each control is marked pending while its value is not the one the run on screen was
 * captured with. OptionsBar.ts assembles them.
 */

import { h } from '../state/dom';
import { BarOption } from '../model/backends';
import { TraceRunJSON } from '../model/protocol';

/** The bar's values by option key (the widget's `options` trait). */
export type OptionValues = Record<string, unknown>;

/** What a control needs of its bar: to change options, and whether an option differs from the run on screen. */
export interface ControlHost {
  set(patch: OptionValues): void;
  /** whether option `key` (item `index` of the check input switches) differs from the run on screen */
  pending(key: string, index?: number): boolean;
  /** the check inputs' labels, one switch each */
  checkInputLabels: readonly string[];
}

/** A control's wrapper, marked pending while its value is not the one the run on screen was captured with. */
function wrap(label: HTMLElement, pending: boolean, description: string): HTMLElement {
  label.classList.toggle('jp-mod-pending', pending);
  label.title = pending ? `${description} (changed: not yet captured with this value)` : description;
  return label;
}

function labelled(spec: BarOption, bar: ControlHost, ...children: (Node | string)[]): HTMLElement {
  return wrap(h('label', { class: 'jp-TraceExplorer-toggle' }, ...children), bar.pending(spec.key), spec.description);
}

/** A menu of the spec's choices (values of any JSON type, told apart by their text), read as its labels say. */
function menu(spec: BarOption, value: unknown, bar: ControlHost): HTMLElement {
  const choices = spec.choices ?? [];
  const select = h('select', { 'data-option': spec.key, 'aria-label': spec.description });
  choices.forEach((choice, i) => {
    const text = spec.choice_labels?.[i] ?? String(choice);
    select.appendChild(h('option', { value: String(choice), selected: choice === value }, text));
  });
  select.addEventListener('change', () => bar.set({ [spec.key]: choices.find(c => String(c) === select.value) }));
  return labelled(spec, bar, select);
}

/** A checkbox for a boolean option. */
function checkbox(spec: BarOption, checked: boolean, bar: ControlHost): HTMLElement {
  const box = h('input', { type: 'checkbox', checked, 'data-option': spec.key });
  box.addEventListener('change', () => bar.set({ [spec.key]: box.checked }));
  return labelled(spec, bar, box, spec.label);
}

/** A number >= 0 (a tolerance); a bad value is refused here, with the reason, and never sent. */
function numberControl(spec: BarOption, value: unknown, bar: ControlHost): HTMLElement {
  const input = h('input', {
    type: 'number',
    min: 0,
    step: 'any',
    value: String(value),
    class: 'jp-TraceExplorer-tolerance',
    'data-option': spec.key,
    'aria-label': spec.description
  });
  input.addEventListener('change', () => {
    const parsed = Number(input.value);
    if (input.value.trim() !== '' && Number.isFinite(parsed) && parsed >= 0) {
      input.setCustomValidity('');
      bar.set({ [spec.key]: parsed });
    } else {
      input.setCustomValidity(`${spec.label} must be a number >= 0`);
      input.reportValidity();
    }
  });
  return labelled(spec, bar, `${spec.label} `, input);
}

/**
 * Free text (any device torch names: "cuda", "cuda:1", "mps"), the common ones offered; empty: where it is
 * captured. The kernel validates it with the option's one definition and says why in the status when it is not.
 */
function deviceControl(spec: BarOption, value: unknown, bar: ControlHost): HTMLElement {
  const device = h('input', {
    type: 'text',
    value: typeof value === 'string' ? value : '',
    placeholder: 'as traced',
    size: 7,
    list: 'jp-TraceExplorer-devices',
    class: 'jp-TraceExplorer-device',
    'data-option': spec.key,
    'aria-label': spec.description
  });
  device.addEventListener('change', () => bar.set({ [spec.key]: device.value.trim() || null }));
  const devices = h(
    'datalist',
    { id: 'jp-TraceExplorer-devices' },
    ...['cpu', 'cuda', 'cuda:0', 'mps'].map(d => h('option', { value: d }))
  );
  return labelled(spec, bar, `${spec.label} `, device, devices);
}

/** One switch per check input set of the request (on: checked with it). */
function inputSetSwitches(spec: BarOption, value: unknown, bar: ControlHost): HTMLElement[] {
  const enabled = Array.isArray(value) ? (value as boolean[]) : [];
  return bar.checkInputLabels.map((label, i) => {
    const box = h('input', { type: 'checkbox', checked: enabled[i] ?? true, 'data-check-input': i });
    box.addEventListener('change', () => {
      const next = bar.checkInputLabels.map((_l, j) => enabled[j] ?? true);
      next[i] = box.checked;
      bar.set({ [spec.key]: next });
    });
    return wrap(
      h('label', { class: 'jp-TraceExplorer-toggle jp-TraceExplorer-chip' }, box, label.split(':')[0]),
      bar.pending(spec.key, i),
      `${spec.description}: ${label}`
    );
  });
}

/** The controls of one live option of the bar (the check input switches are one per input set). */
export function optionControls(spec: BarOption, options: OptionValues, bar: ControlHost): HTMLElement[] {
  const value = options[spec.key];
  switch (spec.control) {
    case 'input_sets':
      return inputSetSwitches(spec, value, bar);
    case 'number':
      return [numberControl(spec, value, bar)];
    case 'device':
      return [deviceControl(spec, value, bar)];
    case 'menu':
      return [menu(spec, value, bar)];
    default:
      return [checkbox(spec, value === true, bar)];
  }
}

/** The options a re-capture keeps (an export's dynamic_shapes and check_inputs): shown, not changed. */
export function readOnlyOptions(specs: readonly BarOption[], run: TraceRunJSON | null | undefined): HTMLElement[] {
  const saved = (run?.options ?? {}) as Record<string, unknown>;
  return specs
    .filter(spec => saved[spec.key] !== null && saved[spec.key] !== undefined)
    .map(spec => {
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
    });
}
