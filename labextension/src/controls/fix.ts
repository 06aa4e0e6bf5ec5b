/**
 * A finding's fix as one click: the options it names (`Finding.fix`, written by the core beside the hint) are set
 * in the options bar, which re-traces in the kernel. Offered only in a live explorer, and only while the options
 * on screen do not already say so.
 */

import { ExplorerContext } from '../state/context';
import { button } from '../state/dom';
import { BarOption, barOptions } from '../model/backends';
import { ExplorerOptions } from '../model/protocol';
import { AnyOptions } from '../model/history';

export type OptionFix = Partial<Pick<ExplorerOptions, 'no_grad' | 'module_mode' | 'check_trace' | 'strict'>>;

/** `no_grad`, `mode eval()`: how the options bar (`specs`, the run's back end's) names what the fix sets. */
export function describeFix(fix: OptionFix, specs: readonly BarOption[] = []): string {
  return Object.entries(fix)
    .map(([key, value]) => {
      const label = specs.find(s => s.key === key)?.label ?? key;
      if (value === true) {
        return `tick ${label}`;
      }
      if (value === false) {
        return `untick ${label}`;
      }
      return `${label} ${value === 'eval' || value === 'train' ? `${value}()` : String(value)}`;
    })
    .join(', ');
}

/** The options still to change for `fix` (empty: the options bar already says so). */
export function pendingFix(fix: OptionFix | undefined, options: AnyOptions | null): OptionFix {
  const out: Record<string, unknown> = {};
  const current = options as Record<string, unknown> | null;
  for (const [key, value] of Object.entries(fix ?? {})) {
    if (!current || current[key] !== value) {
      out[key] = value;
    }
  }
  return out as OptionFix;
}

/** "tick no_grad and re-trace", or null where there is nothing to click (a saved run, a fix already set). */
export function fixButton(ctx: ExplorerContext, fix: OptionFix | undefined): HTMLButtonElement | null {
  const host = ctx.host;
  const options = host.get('options');
  if (host.readOnly || !host.get('live') || !options) {
    return null;
  }
  const todo = pendingFix(fix, options);
  // an export run's bar has no check_trace: a fix it cannot set is not offered
  if (!Object.keys(todo).length || Object.keys(todo).some(key => !(key in options))) {
    return null;
  }
  const b = button(
    `${describeFix(todo, barOptions(ctx.run?.raw))} and re-trace`,
    () => host.set({ options: { ...options, ...todo } }),
    {
      class: 'jp-TraceExplorer-button jp-TraceExplorer-fix',
      title: 'set this in the options bar; the explorer re-traces with it'
    }
  );
  // the card around it selects nodes on click: this click only applies the fix
  b.addEventListener('click', e => e.stopPropagation());
  return b;
}
