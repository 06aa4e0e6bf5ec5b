/**
 * The Dims tab of a live export explorer: the run's dynamic_shapes as the `--dynamic` flags to paste into `%export`
 * (with a copy button), the fixes torch or the product suggests (each with "apply", which puts its dims in the
 * editor), and the editor: per dim of each tensor input, static / Dim.AUTO / a range / a multiple, then
 * "re-export" (`{"type": "dims", "specs": [...]}`: each try lands in the history). What was typed stays until
 * another run is on screen, a refused spec included (the kernel says what is wrong in the status).
 */

import type { DimsEditor, DimsSuggestion } from '../../model/protocol.generated';
import { append, button, card, clear, h } from '../../state/dom';
import type { ExplorerContext } from '../../state/context';
import { StatePanel } from '../../state/panels';
import type { PanelSpec } from '../../state/panels';
import { DimKind, DimRow, DIM_KINDS, edited, flagsText, rowsOf, specsOf, withKind } from './dimsModel';

const SOURCE_WORDS: Record<DimsSuggestion['source'], string> = {
  torch: 'torch suggests',
  'jupyter-tracejit': 'jupyter-tracejit suggests'
};

/** `label --dynamic ... [copy]`: specs as the flags to paste into `%export` or `tracejit export`. */
export function flagsLine(label: string, specs: readonly string[], what: string): HTMLElement {
  const text = flagsText(specs);
  return h(
    'div',
    { class: 'jp-TraceExplorer-dimsFlags', 'data-flags': what },
    h('span', { class: 'jp-TraceExplorer-muted' }, label),
    text ? h('code', { class: 'jp-TraceExplorer-mono' }, text) : h('em', {}, 'every dim static (no --dynamic)'),
    text
      ? button('copy', () => void navigator.clipboard?.writeText(text).catch(() => undefined), {
          class: 'jp-TraceExplorer-button',
          title: 'copy the flags, to paste into %export or tracejit export'
        })
      : null
  );
}

export class DimsPanel extends StatePanel {
  private rows: DimRow[] = [];
  private shown: DimsEditor | null = null;

  constructor(ctx: ExplorerContext) {
    super(ctx, h('section', { class: 'jp-TraceExplorer-dims', 'aria-label': 'dynamic dims editor' }), [
      'dims',
      'status'
    ]);
    this.render();
  }

  get state(): DimsEditor | null {
    return this.ctx.host.readOnly ? null : this.ctx.host.get('dims');
  }

  private edit(i: number, change: Partial<DimRow> | DimKind): void {
    const row = this.rows[i];
    this.rows[i] = typeof change === 'string' ? withKind(row, change) : { ...row, ...change };
    this.render();
  }

  private suggestionCard(s: DimsSuggestion): HTMLElement {
    return card(
      { class: 'jp-TraceExplorer-advice jp-TraceExplorer-dimsSuggestion', 'data-source': s.source },
      [
        h('strong', {}, SOURCE_WORDS[s.source] ?? s.source),
        button('apply', () => this.apply(s.specs), {
          class: 'jp-TraceExplorer-button',
          'data-action': 'apply-suggestion',
          title: 'put these dims in the editor (then re-export)'
        })
      ],
      [
        h('pre', { class: 'jp-TraceExplorer-code' }, s.text),
        h('div', { class: 'jp-TraceExplorer-muted' }, '→ ', h('code', {}, flagsText(s.specs) || 'every dim static'))
      ]
    );
  }

  private apply(specs: string[]): void {
    if (this.shown) {
      this.rows = rowsOf(this.shown, specs);
      this.render();
    }
  }

  private field(i: number, key: 'symbol' | 'min' | 'max' | 'times', label: string, width: number): HTMLElement {
    const input = h('input', {
      type: 'text',
      inputmode: key === 'symbol' ? undefined : 'numeric',
      class: 'jp-TraceExplorer-dimsField',
      value: this.rows[i][key],
      'aria-label': `${this.rows[i].input}:${this.rows[i].dim} ${label}`,
      'data-field': key,
      placeholder: label,
      style: `width: ${width}ch`
    });
    input.addEventListener('change', () => this.edit(i, { [key]: input.value.trim() }));
    return input;
  }

  /** A dim's row (name, size, kind) and, for a range or a multiple, a row under it with `k * name [min, max]`. */
  private rowView(r: DimRow, i: number): HTMLElement[] {
    const where = `${r.input}:${r.dim}`;
    const select = h(
      'select',
      { 'aria-label': `${where} kind`, 'data-dim': where },
      ...DIM_KINDS.map(k => h('option', { value: k.kind, title: k.title, selected: k.kind === r.kind }, k.label))
    );
    select.addEventListener('change', () => this.edit(i, select.value as DimKind));
    const row = h(
      'tr',
      { 'data-dim': where },
      h('td', { class: 'jp-TraceExplorer-mono' }, where),
      h('td', { class: 'jp-TraceExplorer-muted' }, String(r.size)),
      h('td', {}, select)
    );
    if (r.kind !== 'range' && r.kind !== 'multiple') {
      return [row];
    }
    const times = r.kind === 'multiple' ? [this.field(i, 'times', 'k', 3), ' * '] : [];
    const bounds = [' [', this.field(i, 'min', 'min', 4), ', ', this.field(i, 'max', 'max', 4), ']'];
    return [
      row,
      h(
        'tr',
        { 'data-dim-fields': where },
        // the whole row's width, indented under its dim: the fields fit a narrow side panel without clipping
        h(
          'td',
          { colspan: 3, class: 'jp-TraceExplorer-dimsFields' },
          ...times,
          this.field(i, 'symbol', 'name', 9),
          ...bounds
        )
      )
    ];
  }

  render(): void {
    const state = this.state;
    if (state !== this.shown) {
      this.shown = state; // another run on screen: its dims replace what was typed
      this.rows = state ? rowsOf(state) : [];
    }
    clear(this.element);
    if (!state) {
      append(
        this.element,
        h('p', { class: 'jp-TraceExplorer-muted' }, 'the dims of a live export run are edited here')
      );
      return;
    }
    append(this.element, flagsLine('%export flags of this run: ', state.specs, 'run'));
    if (state.problem) {
      append(this.element, h('p', { class: 'jp-TraceExplorer-muted' }, state.problem));
      return;
    }
    if (state.suggestions.length) {
      append(
        this.element,
        h('h4', {}, `Suggested fixes (${state.suggestions.length})`),
        h('ul', { class: 'jp-TraceExplorer-list' }, ...state.suggestions.map(s => this.suggestionCard(s)))
      );
    }
    const changed = edited(state, this.rows);
    const busy = this.ctx.host.get('status') === 'tracing';
    append(
      this.element,
      h('h4', {}, 'Dims'),
      h(
        'table',
        { class: 'jp-TraceExplorer-table jp-TraceExplorer-dimsTable' },
        h('thead', {}, h('tr', {}, h('th', {}, 'dim'), h('th', {}, 'size'), h('th', {}, 'kind'), h('th', {}, ''))),
        h('tbody', {}, ...this.rows.flatMap((r, i) => this.rowView(r, i)))
      ),
      changed ? flagsLine('edited: ', specsOf(this.rows), 'edited') : null,
      h(
        'div',
        { class: 'jp-TraceExplorer-dimsActions' },
        button('re-export', () => this.ctx.host.send({ type: 'dims', specs: specsOf(this.rows) }), {
          class: 'jp-TraceExplorer-button jp-mod-accept',
          'data-action': 'export-dims',
          disabled: busy,
          title: 'export again with these dims (and the options above); the try joins the history'
        }),
        changed
          ? button('reset', () => this.apply(state.specs), {
              class: 'jp-TraceExplorer-button',
              title: 'back to the dims of the run on screen'
            })
          : null
      )
    );
  }
}

/** The Dims tab: shown while the kernel offers a dims editor for the run on screen (a live export). */
export const DIMS_PANEL: PanelSpec<DimsPanel> = {
  id: 'dims',
  title: 'Dims',
  create: ctx => new DimsPanel(ctx),
  applies: (_run, view) => view.state !== null,
  label: () => 'Dims'
};
