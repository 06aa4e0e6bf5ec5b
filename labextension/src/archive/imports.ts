/**
 * A `.pt2` whose program takes or returns a class its exporter registered with torch's pytree (a transformers
 * `ModelOutput`) loads only once the module registering it is imported, and the process reading it has not
 * (jupyter_tracejit/core/archive/layout.py: tag `unregistered_pytree`, torch's message naming the class). The
 * document then offers to load it again importing that module (archive/view.ts); this is the one rule of which
 * module, and of what may be asked (the server checks the same: dotted names only).
 */

/** What the server imports: a dotted module name (jupyter_tracejit/server/worker.py MODULE_NAME). */
const MODULE_NAME = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;
/** torch's words for the class (core/archive/layout.py `_UNREGISTERED`). */
const UNREGISTERED = /Deserializing ([\w.]+) in pytree is not registered/;

/** Whether `name` is a module name the server would import. */
export function isModuleName(name: string): boolean {
  return MODULE_NAME.test(name);
}

/**
 * The module to import for a run (its JSON text) whose load failed on an unregistered pytree class: the class's
 * module (`transformers.modeling_outputs` for `transformers.modeling_outputs.BaseModelOutput`); null for any other
 * run, a class with no module, or a name the server would refuse.
 */
export function unregisteredModule(runText: string): string | null {
  if (!runText.includes('unregistered_pytree')) {
    return null; // most runs: not worth parsing a big run's JSON
  }
  let error: { tag?: unknown; message?: unknown } | null;
  try {
    error = (JSON.parse(runText) as { error?: { tag?: unknown; message?: unknown } | null }).error ?? null;
  } catch {
    return null;
  }
  if (!error || error.tag !== 'unregistered_pytree' || typeof error.message !== 'string') {
    return null;
  }
  const found = UNREGISTERED.exec(error.message);
  const dot = found ? found[1].lastIndexOf('.') : -1;
  const module = found && dot > 0 ? found[1].slice(0, dot) : null;
  return module && isModuleName(module) ? module : null;
}
