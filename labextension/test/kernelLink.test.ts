/**
 * How the `%trace` placeholder finds the kernel its cancel interrupts: the main-area document (notebook, console)
 * whose node holds the output, while its kernel is busy; none elsewhere, and none before the plugin sets the finder.
 */
import { afterEach, describe, expect, it } from 'vitest';

import { interruptFor, setKernelFinder, shellKernelFinder } from '../src/kernelLink';

/** A DOM node stand-in: the finder only asks whether one node contains another. */
function fakeNode(children: object[] = []): HTMLElement {
  const n = { contains: (other: object): boolean => other === n || children.includes(other) };
  return n as unknown as HTMLElement;
}

function docWithKernel(output: object, status: string, interrupted: string[], name: string): object {
  return {
    node: fakeNode([output]),
    sessionContext: {
      session: {
        kernel: {
          status,
          interrupt: async () => {
            interrupted.push(name);
          }
        }
      }
    }
  };
}

afterEach(() => setKernelFinder(null));

describe('the kernel of a placeholder', () => {
  it('is the busy kernel of the document that holds it', async () => {
    const output = fakeNode();
    const interrupted: string[] = [];
    const shell = {
      widgets: () => [
        { node: fakeNode() }, // a launcher: no session
        docWithKernel(fakeNode(), 'busy', interrupted, 'other notebook'),
        docWithKernel(output, 'busy', interrupted, 'this notebook')
      ]
    };
    const interrupt = shellKernelFinder(shell)(output);
    expect(interrupt).not.toBeNull();
    await interrupt!();
    expect(interrupted).toEqual(['this notebook']);
  });

  it('is none when that kernel is idle (a placeholder saved, reopened) or the output is in no document', () => {
    const output = fakeNode();
    const shell = { widgets: () => [docWithKernel(output, 'idle', [], 'notebook')] };
    expect(shellKernelFinder(shell)(output)).toBeNull();
    expect(shellKernelFinder(shell)(fakeNode())).toBeNull();
    expect(shellKernelFinder({ widgets: () => [] })(output)).toBeNull();
  });

  it('is none until the JupyterLab plugin sets the finder (the report, anywidget hosts)', async () => {
    const output = fakeNode();
    expect(interruptFor(output)).toBeNull();
    const interrupted: string[] = [];
    setKernelFinder(shellKernelFinder({ widgets: () => [docWithKernel(output, 'busy', interrupted, 'notebook')] }));
    await interruptFor(output)!();
    expect(interrupted).toEqual(['notebook']);
  });
});
