/**
 * Stepping through divergences: first / previous / next / last with "n of m".
 * Pure state; the check panel binds buttons and keys to it.
 */

import { plural } from './words';

export type StepCommand = 'first' | 'previous' | 'next' | 'last';

/** Keyboard keys of the stepper (when the check panel has focus). */
export const STEP_KEYS: Record<string, StepCommand> = {
  Home: 'first',
  ArrowLeft: 'previous',
  ArrowUp: 'previous',
  k: 'previous',
  p: 'previous',
  ArrowRight: 'next',
  ArrowDown: 'next',
  j: 'next',
  n: 'next',
  End: 'last'
};

export class Stepper {
  private readonly count: number;
  private index: number;

  /** `current` is -1 (nothing selected) or an index < count. */
  constructor(count: number, current = -1) {
    this.count = Math.max(0, count);
    this.index = current >= 0 && current < this.count ? current : -1;
  }

  get current(): number {
    return this.index;
  }

  get size(): number {
    return this.count;
  }

  /** "3 of 12", "– of 12" with nothing selected, "no divergences". */
  get label(): string {
    if (this.count === 0) {
      return 'no divergences';
    }
    return `${this.index < 0 ? '–' : this.index + 1} of ${this.count}`;
  }

  canStep(command: StepCommand): boolean {
    if (this.count === 0) {
      return false;
    }
    switch (command) {
      case 'first':
        return this.index !== 0;
      case 'last':
        return this.index !== this.count - 1;
      case 'previous':
        return this.index > 0;
      case 'next':
        return this.index < this.count - 1;
    }
  }

  /** Apply a command; returns the new index (unchanged at the ends: no wrap-around). */
  step(command: StepCommand): number {
    if (this.count === 0) {
      return this.index;
    }
    switch (command) {
      case 'first':
        this.index = 0;
        break;
      case 'last':
        this.index = this.count - 1;
        break;
      case 'previous':
        this.index = this.index < 0 ? this.count - 1 : Math.max(0, this.index - 1);
        break;
      case 'next':
        this.index = Math.min(this.count - 1, this.index + 1);
        break;
    }
    return this.index;
  }
}

/**
 * The note under the causes on the downstream divergences at other lines: it asks to tick "downstream too" (the
 * stepper's downstream mode) until that is ticked (it stayed, asking, after the tick).
 */
export function followingNote(count: number, withDownstream: boolean): string {
  const walk = withDownstream ? 'the stepper walks them' : 'tick "downstream too" to walk them';
  return `${plural(count, 'downstream divergence')} at other lines follow from these roots (${walk})`;
}
