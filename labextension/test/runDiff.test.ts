/**
 * The Diff view's model on the fixture the Python model wrote (tests/frontend_fixtures.py `diffed`: tj.diff of a
 * small convnet and its next version, whose block's activation is GELU instead of ReLU and whose stem is wider),
 * shown as the new run carrying the diff: the steps by module scope in the kernel's words, the changed modules,
 * the parameter rows, and the two pictures with the unchanged ops paired and the changed one apart.
 */
import { describe, expect, it } from 'vitest';

import { SCHEMA_VERSION, TraceRunJSON } from '../src/model/protocol';
import { decodeRun } from '../src/model/run';
import { changedModules, diffPictures, parameterRows, scopeSteps, topModule, verdict } from '../src/model/runDiff';
import { savedRunProblem } from '../src/model/validate';
import { rawRun } from './runFixtures';

describe('a run shown as the new side of tj.diff', () => {
  const data = rawRun('diffed');
  const run = decodeRun(data);
  const view = run.raw.diff_against!;
  const current = run.graphs.get(view.method)!;

  it('is a valid current run whose optional diff_against the explorer reads', () => {
    expect(data.schema_version).toBe(SCHEMA_VERSION);
    expect(savedRunProblem(data)).toBeNull();
    expect(view.method).toBe('forward');
    // a run without it reads as before
    const plain: TraceRunJSON = { ...data };
    delete plain.diff_against;
    expect(decodeRun(plain).raw.diff_against).toBeUndefined();
  });

  it('steps through the changed module scopes in the kernel words, each with its root ops on both sides', () => {
    const steps = scopeSteps(view.diff);
    expect(steps.map(s => s.scope)).toEqual(['block.1']);
    const [step] = steps;
    expect(step.text).toBe('block.1: 1 op changed (aten::relu -> aten::gelu)');
    expect(step.details).toEqual(['aten::relu -> aten::gelu']);
    const old = diffPictures(view, current).old;
    expect(step.oldNodes.map(id => old.nodes[id].kind)).toEqual(['aten::relu']);
    expect(step.newNodes.map(id => current.nodes[id].kind)).toEqual(['aten::gelu']);
    expect(old.nodes[step.oldNodes[0]].scope).toBe('block.1');
  });

  it('groups the changed scopes by top-level module', () => {
    expect(topModule('encoder.layer.3')).toBe('encoder');
    expect(topModule('')).toBe('');
    const fake = ['block.0', 'block.1', '', 'head'].map(scope => ({
      scope,
      method: 'forward',
      text: scope,
      details: [],
      oldNodes: [],
      newNodes: []
    }));
    expect(changedModules(fake).map(m => m.text)).toEqual([
      'block: 2 scopes changed',
      'top level: 1 scope changed',
      'head: 1 scope changed'
    ]);
    expect(changedModules(scopeSteps(view.diff)).map(m => m.text)).toEqual(['block: 1 scope changed']);
  });

  it('lists the parameters that changed type, with the words of the kernel', () => {
    const rows = parameterRows(view.diff);
    expect(rows.map(r => [r.name, r.change, r.before, r.after])).toEqual([
      ['stem.0.weight', 'type', 'Float(8, 3, 3, 3)', 'Float(16, 3, 3, 3)'],
      ['stem.0.bias', 'type', 'Float(8)', 'Float(16)'],
      ['block.0.weight', 'type', 'Float(8, 8, 3, 3)', 'Float(8, 16, 3, 3)']
    ]);
    expect(rows.every(r => r.maxAbs === '')).toBe(true); // values were not compared
    expect(rows[1].what).toBe('Float(8) → Float(16)');
    expect(rows[0].text).toBe('stem.0.weight Float(8, 3, 3, 3) -> Float(16, 3, 3, 3)');
    expect(verdict(view.diff)).toMatchObject({ level: 'warning', label: 'different' });
  });

  it('draws both graphs with the unchanged ops paired under one name and the changed op apart', () => {
    const pictures = diffPictures(view, current);
    const [step] = scopeSteps(view.diff);
    const [oldRelu, newGelu] = [step.oldNodes[0], step.newNodes[0]];
    // the changed op has no partner: its own name on each side, classed a root difference
    expect(pictures.nameOf[0](oldRelu)).toBe(`o${oldRelu}`);
    expect(pictures.nameOf[1](newGelu)).toBe(`n${newGelu}`);
    expect(pictures.dots[0]).toMatch(new RegExp(`o${oldRelu} \\[[^\\n]*class="[^"]*differs root"`));
    expect(pictures.dots[1]).toMatch(new RegExp(`n${newGelu} \\[[^\\n]*class="[^"]*differs root"`));
    // the block's convolution is the same op on both sides: one name in both pictures
    const conv = pictures.old.nodes.find(n => n.scope === 'block.0' && n.role === 'op')!;
    const name = pictures.nameOf[0](conv.id);
    expect(name).toBe(`p${conv.id}`);
    expect(current.nodes[pictures.names[1].get(name)!].scope).toBe('block.0');
    // what reads the changed op differs downstream of it
    expect(pictures.dots[1]).toMatch(/class="[^"]*differs downstream"/);
  });
});
