import { then } from './maybe-promise';

describe('then', () => {
  it('continues a plain value at once, without a promise', () => {
    expect(then(2, (n) => n * 3)).toBe(6);
  });

  it('continues a promise once it settles, and passes its failure on', async () => {
    const later = then(Promise.resolve(2), (n) => n * 3);
    expect(later).toBeInstanceOf(Promise);
    await expect(later).resolves.toBe(6);
    await expect(then(Promise.reject(new Error('down')), () => 1)).rejects.toThrow('down');
  });
});
