/**
 * The options bar's controls, one per option spec (model/protocol.ts OPTION_SPECS, EXPORT_OPTION_SPECS): a
 * checkbox, a menu, the tolerance's number, the device's text, a switch per check input; an export run's
 * dynamic_shapes and check_inputs shown read-only. Each control is marked pending while its value is not the one
 * the run on screen was traced with. OptionsBar.ts decides which specs a bar shows.
 */

import { h } from '../state/dom';
import {
  EXPORT_OPTION_SPECS,
  EXPORT_READ_ONLY_OPTIONS,
  ExplorerOptions,
  ExportExplorerOptions,
  OPTION_SPECS,
  TraceRunJSON
} from '../model/protocol';

export type OptionSpec = (typeof OPTION_SPECS)[number];
export type ExportOptionSpec = (typeof EXPORT_OPTION_SPECS)[number];
export type OptionKey = OptionSpec['key'] | ExportOptionSpec['key'];

/** What a control needs of its bar: to change options, and whether an option differs from the run on screen. */
export interface ControlHost {
  set(patch: Partial<ExplorerOptions> | Partial<ExportExplorerOptions>): void;
  /** whether option `key` (item `index` of the check input switches) differs from the run on screen */
  pending(key: OptionKey, index?: number): boolean;
  /** the check inputs' labels, one switch each */
  checkInputLabels: readonly string[];
}

/** How the draft_export choices read in the menu. */
const DRAFT_LABELS: Record<ExportExplorerOptions['draft'], string> = {
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

/** A control's wrapper, marked pending while its value is not the one the run on screen was traced with. */
function wrap(label: HTMLElement, pending: boolean, description: string): HTMLElement {
  label.classList.toggle('jp-mod-pending', pending);
  label.title = pending ? `${description} (changed: not yet traced with this value)` : description;
  return label;
}

/** A menu of `choices`, read as `labels` say. */
function menu(
  key: string,
  description: string,
  choices: readonly string[],
  value: string,
  labels: Record<string, string>
): HTMLSelectElement {
  const select = h('select', { 'data-option': key, 'aria-label': description });
  for (const choice of choices) {
    select.appendChild(h('option', { value: choice, selected: value === choice }, labels[choice]));
  }
  return select;
}

/** A checkbox for a boolean option. */
function checkbox(
  spec: { key: OptionKey; label: string; description: string },
  checked: boolean,
  bar: ControlHost
): HTMLElement {
  const box = h('input', { type: 'checkbox', checked, 'data-option': spec.key });
  box.addEventListener('change', () => bar.set({ [spec.key]: box.checked }));
  return wrap(
    h('label', { class: 'jp-TraceExplorer-toggle' }, box, spec.label),
    bar.pending(spec.key),
    spec.description
  );
}

/** One control of an export run's bar: a menu for draft and the module mode, a checkbox otherwise. */
export function exportControl(spec: ExportOptionSpec, options: ExportExplorerOptions, bar: ControlHost): HTMLElement {
  const key = spec.key;
  if (key === 'draft' || key === 'module_mode') {
    const labels: Record<string, string> = key === 'draft' ? DRAFT_LABELS : MODE_LABELS;
    const select = menu(key, spec.description, spec.choices, options[key], labels);
    select.addEventListener('change', () => bar.set({ [key]: select.value }));
    return wrap(h('label', { class: 'jp-TraceExplorer-toggle' }, select), bar.pending(key), spec.description);
  }
  return checkbox(spec, options[key], bar);
}

/** dynamic_shapes and check_inputs of an export run: shown, not changed (a re-export keeps the request's). */
export function readOnlyExportOptions(run: TraceRunJSON | null | undefined): HTMLElement[] {
  const saved = (run?.options ?? {}) as Record<string, unknown>;
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

/** The controls of one option of a trace's bar (the check input switches are one per input). */
export function traceControl(spec: OptionSpec, options: ExplorerOptions, bar: ControlHost): HTMLElement[] {
  const key = spec.key;
  if (key === 'check_inputs_enabled') {
    return checkInputSwitches(spec, options, bar);
  }
  if (key === 'check_tolerance') {
    return [toleranceControl(spec, options, bar)];
  }
  if (key === 'module_mode') {
    const select = menu(key, spec.description, spec.choices, options.module_mode, MODE_LABELS);
    select.addEventListener('change', () => bar.set({ module_mode: select.value as ExplorerOptions['module_mode'] }));
    return [wrap(h('label', { class: 'jp-TraceExplorer-toggle' }, select), bar.pending(key), spec.description)];
  }
  if (key === 'target_device') {
    return [deviceControl(spec, options, bar)];
  }
  return [checkbox(spec, options[key], bar)];
}

function checkInputSwitches(spec: OptionSpec, options: ExplorerOptions, bar: ControlHost): HTMLElement[] {
  return bar.checkInputLabels.map((label, i) => {
    const box = h('input', {
      type: 'checkbox',
      checked: options.check_inputs_enabled[i] ?? true,
      'data-check-input': i
    });
    box.addEventListener('change', () => {
      const next = [...options.check_inputs_enabled];
      next[i] = box.checked;
      bar.set({ check_inputs_enabled: next });
    });
    return wrap(
      h('label', { class: 'jp-TraceExplorer-toggle jp-TraceExplorer-chip' }, box, label.split(':')[0]),
      bar.pending(spec.key, i),
      `${spec.description}: ${label}`
    );
  });
}

function toleranceControl(spec: OptionSpec, options: ExplorerOptions, bar: ControlHost): HTMLElement {
  const tol = h('input', {
    type: 'number',
    min: 0,
    step: 'any',
    value: String(options.check_tolerance),
    class: 'jp-TraceExplorer-tolerance',
    'data-option': spec.key,
    'aria-label': spec.description
  });
  tol.addEventListener('change', () => {
    const value = Number(tol.value);
    if (tol.value.trim() !== '' && Number.isFinite(value) && value >= 0) {
      tol.setCustomValidity('');
      bar.set({ check_tolerance: value });
    } else {
      tol.setCustomValidity(`${spec.label} must be a number >= 0`);
      tol.reportValidity();
    }
  });
  return wrap(
    h('label', { class: 'jp-TraceExplorer-toggle' }, `${spec.label} `, tol),
    bar.pending(spec.key),
    spec.description
  );
}

/**
 * Free text (any device torch names: "cuda", "cuda:1", "mps"), the common ones offered; empty: where it is traced.
 * The kernel validates it with the option's one definition and says why in the status when it is not.
 */
function deviceControl(spec: OptionSpec, options: ExplorerOptions, bar: ControlHost): HTMLElement {
  const device = h('input', {
    type: 'text',
    value: options.target_device ?? '',
    placeholder: 'as traced',
    size: 7,
    list: 'jp-TraceExplorer-devices',
    class: 'jp-TraceExplorer-device',
    'data-option': spec.key,
    'aria-label': spec.description
  });
  device.addEventListener('change', () => bar.set({ target_device: device.value.trim() || null }));
  const devices = h(
    'datalist',
    { id: 'jp-TraceExplorer-devices' },
    ...['cpu', 'cuda', 'cuda:0', 'mps'].map(d => h('option', { value: d }))
  );
  return wrap(
    h('label', { class: 'jp-TraceExplorer-toggle' }, `${spec.label} `, device, devices),
    bar.pending(spec.key),
    spec.description
  );
}
