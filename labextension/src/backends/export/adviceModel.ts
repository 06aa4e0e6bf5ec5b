/**
 * What made an export's dynamic dims fail, as the Guards tab lists it (`run.records.advice`, core/export/advice.py):
 * per dim, what happened in words, the user's line and, when a library made the guard, that library's line beside
 * it, whether the guards hold for the whole range, torch's suggested fix in the user's `dynamic_shapes` terms, and
 * the fixes ranked. DOM-free, so vitest checks it.
 */

import type { DimAdvice, ExportReport, Fix } from '../../model/protocol.generated';

/** What happened to the dim, by the advice's kind. */
const KIND_WORDS: Record<DimAdvice['kind'], string> = {
  refused: 'export refused it',
  specialized: 'the code made it a constant',
  check_failed: "the check's inputs failed a guard on it"
};

/** Each fix's kind as a short label beside its words. */
const FIX_LABELS: Record<Fix['kind'], string> = {
  model_fact: 'the model',
  auto: 'Dim.AUTO',
  static: 'static',
  range: 'range',
  multiple: 'multiple',
  suggested: "torch's fix",
  check: 'torch._check',
  rewrite: 'rewrite',
  cond: 'torch.cond'
};

export interface AdviceItem {
  /** `x:1` (the input and dim of dynamic_shapes) or the symbol where they are not known */
  dim: string;
  /** `x.size()[1], given Dim('seq', min=2, max=64): export refused it` */
  headline: string;
  exprs: string[];
  /** the user's line (where the code made the guard, or called into the library that did); null when unknown */
  at: { file: string; line: number; code: string } | null;
  /** the library's line beside it (`in torch.nn`), null when the line is the user's own */
  library: { name: string; file: string; line: number; code: string } | null;
  /** whether the guards hold for every size of the range, in words; null when not judged */
  holds: string | null;
  /** torch's suggested fix as the dim's spec (`8*Dim('_seq', min=1, max=8)`), "" for none */
  suggested: string;
  fixes: { label: string; text: string; spec: string; dynamicShapes: string; code: string }[];
}

function dimOf(a: DimAdvice): string {
  return a.input && a.dim >= 0 ? `${a.input}:${a.dim}` : a.symbol;
}

function holdsWords(holds: boolean | null | undefined): string | null {
  if (holds === true) {
    return 'its guards hold for every size of the range: torch only failed to prove them';
  }
  return holds === false ? 'its guards fail for some sizes of the range' : null;
}

/** The advice of an export run, one item per failed dim, in the order the kernel ranked them. */
export function adviceItems(report: ExportReport | null | undefined): AdviceItem[] {
  return (report?.advice ?? []).map(a => ({
    dim: dimOf(a),
    headline:
      [a.source || a.symbol, a.given ? `given ${a.given}` : ''].filter(Boolean).join(', ') +
      `: ${KIND_WORDS[a.kind] ?? a.kind}`,
    exprs: a.exprs,
    at: a.file ? { file: a.file, line: a.line, code: a.code } : null,
    library:
      a.library && a.library_file
        ? { name: a.library, file: a.library_file, line: a.library_line, code: a.library_code }
        : null,
    holds: holdsWords(a.holds),
    suggested: a.suggested ?? '',
    fixes: a.fixes.map(f => ({
      label: FIX_LABELS[f.kind] ?? f.kind,
      text: f.text,
      spec: f.spec,
      dynamicShapes: f.dynamic_shapes,
      code: f.code
    }))
  }));
}
