/**
 * A JSON value of the run (a constant, an attribute: core/values.py's encoding) in words. Two spellings share the
 * walk and differ in their leaves: the TorchScript IR text's (graph.ts `formatAttribute`: `1` / `0`,
 * `<Tensor Float[3]>`) and the graph labels' (dotText.ts `formatValue`: `True` / `False`, `INT64_MAX`,
 * `tensor<Float[3]>`), each mirroring its Python twin.
 */

/** What a spelling writes where the two differ; `tensor` answers null for an object that is no tensor. */
export interface ValueSpelling {
  boolean(value: boolean): string;
  number(value: number): string;
  tensor(value: Record<string, unknown>, spell: (value: unknown) => string): string | null;
}

/** `value` in `spelling`: None, a string quoted, lists and objects item by item, floats, devices and reprs. */
export function spellValue(value: unknown, spelling: ValueSpelling): string {
  const spell = (v: unknown): string => spellValue(v, spelling);
  if (value === null || value === undefined) {
    return 'None';
  }
  if (typeof value === 'boolean') {
    return spelling.boolean(value);
  }
  if (typeof value === 'number') {
    return spelling.number(value);
  }
  if (typeof value === 'string') {
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) {
    return '[' + value.map(spell).join(', ') + ']';
  }
  const obj = value as Record<string, unknown>;
  const tensor = spelling.tensor(obj, spell);
  if (tensor !== null) {
    return tensor;
  }
  if ('float' in obj) {
    return String(obj.float);
  }
  if ('device' in obj) {
    return JSON.stringify(String(obj.device));
  }
  if ('repr' in obj) {
    return String(obj.repr);
  }
  return (
    '{' +
    Object.entries(obj)
      .map(([k, v]) => `${k}: ${spell(v)}`)
      .join(', ') +
    '}'
  );
}
