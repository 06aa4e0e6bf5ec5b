/**
 * The kernel an output belongs to, for the renderers JupyterLab gives none (MIME renderers): the `%trace`
 * placeholder's cancel interrupts the kernel busy with the trace, the one of the notebook (or console) the
 * placeholder is in. The JupyterLab plugin (plugin.ts) sets the finder; where it is not loaded there is none, and
 * the placeholder offers no cancel.
 */

/** Interrupt the kernel (what the toolbar's ■ does): Python raises KeyboardInterrupt in the running cell. */
export type Interrupt = () => Promise<void>;

/** The interrupt of the kernel behind the document that holds `node`, or null when it has none. */
export type KernelFinder = (node: HTMLElement) => Interrupt | null;

let finder: KernelFinder | null = null;

export function setKernelFinder(find: KernelFinder | null): void {
  finder = find;
}

/**
 * How to interrupt the kernel of the document `node` is in, while that kernel is busy (running the cell that
 * traces); null when it is idle (a placeholder saved in a notebook, reopened) or outside a document with a kernel.
 */
export function interruptFor(node: HTMLElement): Interrupt | null {
  return finder?.(node) ?? null;
}

/** What a JupyterLab document with a kernel exposes (a notebook panel, a console panel: their session context). */
interface WithSession {
  node: HTMLElement;
  sessionContext?: { session?: { kernel?: { status: string; interrupt(): Promise<void> } | null } | null };
}

/**
 * The finder for an application shell: the main-area widget whose node holds `node`, read through its session
 * context. Typed by what it reads, so the extension needs no notebook package (Notebook 7's shell has the same
 * `widgets('main')`).
 */
export function shellKernelFinder(shell: { widgets(area?: string): Iterable<unknown> }): KernelFinder {
  return node => {
    for (const widget of shell.widgets('main')) {
      const doc = widget as WithSession;
      const kernel = doc.node?.contains(node) ? doc.sessionContext?.session?.kernel : null;
      if (kernel && kernel.status === 'busy') {
        return () => kernel.interrupt();
      }
    }
    return null;
  };
}
