import * as maybePromise from './maybe-promise';
import { andThen } from './maybe-promise';

describe('andThen', () => {
  it('continues a plain value at once, without a promise', () => {
    expect(andThen(2, (n) => n * 3)).toBe(6);
  });

  it('continues a promise once it settles, and passes its failure on', async () => {
    const later = andThen(Promise.resolve(2), (n) => n * 3);
    expect(later).toBeInstanceOf(Promise);
    await expect(later).resolves.toBe(6);
    await expect(andThen(Promise.reject(new Error('down')), () => 1)).rejects.toThrow('down');
  });

  it('is not named `then`: the module is no thenable, so a promise of it resolves to the module', async () => {
    // An export named `then` made Promise.resolve(module) call it as the module's `then` and reject.
    expect('then' in maybePromise).toBe(false);
    await expect(Promise.resolve(maybePromise)).resolves.toBe(maybePromise);
  });
});
