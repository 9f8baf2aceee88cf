/**
 * A fixed number of permits for work that must not all run at once. `run` takes a permit, or
 * waits in memory (first come, first served) until one is released; waiting holds nothing else,
 * no database connection above all. A permit is released when the work settles, whether it
 * resolved or threw.
 */
export class Permits {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1)
      throw new RangeError(`Permits: size must be a positive integer, not ${size}`);
    this.free = size;
  }

  /** Callers waiting for a permit. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Permits taken now. */
  get taken(): number {
    return this.size - this.free;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await work();
    } finally {
      this.release();
    }
  }

  private acquire(): Promise<void> {
    if (this.free > 0) {
      this.free -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Hands the permit straight to the longest waiter, so a newcomer cannot overtake it. */
  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free += 1;
  }
}
