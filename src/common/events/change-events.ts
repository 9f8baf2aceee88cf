import { Logger } from '@nestjs/common';

/**
 * In-process announcements of committed changes, for what caches derived state (the relay
 * decision) to forget it. Emitters call `emit` after the commit only; a listener that throws is
 * logged and does not stop the others.
 */
export class ChangeEvents<T> {
  private readonly logger = new Logger(this.constructor.name);
  private readonly listeners = new Set<(change: T) => void>();

  /** Calls `listener` for every change from now on; the returned function stops it. */
  onChange(listener: (change: T) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(change: T): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(change);
      } catch (e: unknown) {
        this.logger.error({ err: e, change }, 'Change listener failed');
      }
    }
  }
}
