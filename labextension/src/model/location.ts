/**
 * How the explorer names a place in the user's code. A notebook cell's code lives in a file named by a hash
 * (`/tmp/ipykernel_123/2749541092.py`); the run's `file_names` table (filled by the kernel from IPython's
 * compiler) names it `cell [9]`, so the place reads `cell [9], line 7`. Other files read `model.py:7`.
 * `jupyter_tracejit/render/html.py` `location_label` writes the same labels for the saved HTML.
 */

/** file -> display name (`TraceRun.file_names`). */
export type FileNames = Readonly<Record<string, string>>;

/** `cell [9], line 7` for a named file, else `model.py:7` (the file's base name). */
export function locationLabel(file: string, line: number, fileNames: FileNames): string {
  const name = Object.prototype.hasOwnProperty.call(fileNames, file) ? fileNames[file] : undefined;
  if (name) {
    return `${name}, line ${line}`;
  }
  if (!file) {
    return '?';
  }
  const parts = file.split(/[\\/]/);
  return `${parts[parts.length - 1] || file}:${line}`;
}
